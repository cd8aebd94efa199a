"""Task-level metrics: from output error to the accuracy a user actually loses.

Inputs are the model outputs per sample (float reference and dequantized quantized), plus
optional labels. Classification-like outputs (one score vector per sample) get accuracy,
agreement and per-class drop; any other output gets per-sample SQNR, cosine and max error.

Definitions (one place, used by CLI, GUI and reports):
- top1_agreement: share of samples where both models predict the same class (argmax).
- top5_agreement: share of samples where the float model's top-1 class is among the quantized
  model's top-5 classes (top-k with k = min(5, number of classes)).
- accuracy: share of samples whose argmax equals the label; drop = float - quantized accuracy,
  in percentage points.
- worst samples: flipped predictions first (float top-1 != quantized top-1), then by lowest
  per-sample output SQNR.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from inspector.core.stats.metrics import _finite, sqnr_db

KINDS = ("classification", "other")


@dataclass(frozen=True)
class SampleOutcome:
    index: int
    source: str
    label: int | None
    float_pred: int | None
    quant_pred: int | None
    output_sqnr_db: float
    cosine: float | None
    max_abs: float

    @property
    def flipped(self) -> bool:
        return self.float_pred is not None and self.float_pred != self.quant_pred

    def to_json(self, class_names: Sequence[str] | None = None) -> dict:
        d = {
            "index": self.index,
            "source": self.source,
            "label": self.label,
            "float_pred": self.float_pred,
            "quant_pred": self.quant_pred,
            "output_sqnr_db": _finite(self.output_sqnr_db),
            "cosine": self.cosine,
            "max_abs": self.max_abs,
            "flipped": self.flipped,
        }
        if class_names:
            d["label_name"] = _name(class_names, self.label)
            d["float_pred_name"] = _name(class_names, self.float_pred)
            d["quant_pred_name"] = _name(class_names, self.quant_pred)
        return d


@dataclass(frozen=True)
class TaskResult:
    kind: str
    num_samples: int
    float_accuracy: float | None
    quant_accuracy: float | None
    top1_agreement: float | None
    top5_agreement: float | None
    outcomes: tuple[SampleOutcome, ...]  # in sample order
    per_class: dict[int, dict] = field(default_factory=dict)  # label -> {count, float_accuracy, quant_accuracy, drop}
    class_names: tuple[str, ...] | None = None

    @property
    def accuracy_drop_pct(self) -> float | None:
        if self.float_accuracy is None or self.quant_accuracy is None:
            return None
        return 100.0 * (self.float_accuracy - self.quant_accuracy)

    def worst(self, n: int = 10) -> list[SampleOutcome]:
        return sorted(self.outcomes, key=_worst_key)[:n]

    def to_json(self, worst: int = 10) -> dict:
        names = self.class_names
        return {
            "kind": self.kind,
            "num_samples": self.num_samples,
            "float_accuracy": self.float_accuracy,
            "quant_accuracy": self.quant_accuracy,
            "accuracy_drop_pct": self.accuracy_drop_pct,
            "top1_agreement": self.top1_agreement,
            "top5_agreement": self.top5_agreement,
            "worst_samples": [o.to_json(names) for o in self.worst(worst)],
            "per_class": [
                {"label": k, "name": _name(names, k), **v} for k, v in sorted(self.per_class.items())
            ],
            "per_sample_sqnr_db": [_finite(o.output_sqnr_db) for o in self.outcomes],
        }


def _name(names: Sequence[str] | None, k: int | None) -> str | None:
    if names is None or k is None or not 0 <= k < len(names):
        return None
    return names[k]


def _worst_key(o: SampleOutcome) -> tuple:
    s = o.output_sqnr_db
    return (not o.flipped, s if not math.isnan(s) else math.inf, o.index)


def detect_kind(output_shape: Sequence[int]) -> str:
    """Classification when each sample's output is one vector of >= 2 scores."""
    dims = [d for d in output_shape[1:] if d != 1] if len(output_shape) > 1 else list(output_shape)
    return "classification" if len(dims) == 1 and dims[0] >= 2 else "other"


def task_metrics(
    float_outputs: Sequence[np.ndarray],
    quant_outputs: Sequence[np.ndarray],
    labels: Sequence[int | None] | None = None,
    sources: Sequence[str] | None = None,
    kind: str | None = None,
    class_names: Sequence[str] | None = None,
) -> TaskResult:
    """Task metrics over samples; outputs[i] is one sample's (dequantized) output array."""
    n = len(float_outputs)
    if len(quant_outputs) != n:
        raise ValueError(f"{n} float outputs but {len(quant_outputs)} quantized outputs")
    if n == 0:
        raise ValueError("no samples")
    kind = kind or detect_kind(np.shape(float_outputs[0]))
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}; choose one of {KINDS}")
    has_labels = labels is not None and all(lbl is not None for lbl in labels) and kind == "classification"
    outcomes = []
    f_top1 = np.zeros(n, bool)
    agree5 = np.zeros(n, bool)
    for i in range(n):
        x = np.asarray(float_outputs[i], np.float64).ravel()
        y = np.asarray(quant_outputs[i], np.float64).ravel()
        e = x - y
        den = math.sqrt(float(x @ x) * float(y @ y))
        fp = qp = None
        if kind == "classification":
            fp, qp = int(np.argmax(x)), int(np.argmax(y))
            k = min(5, x.size)
            agree5[i] = fp in np.argsort(-y, kind="stable")[:k]
            f_top1[i] = fp == qp
        outcomes.append(
            SampleOutcome(
                index=i,
                source=sources[i] if sources else f"sample {i}",
                label=None if labels is None or labels[i] is None else int(labels[i]),
                float_pred=fp,
                quant_pred=qp,
                output_sqnr_db=sqnr_db(float(x @ x), float(e @ e)),
                cosine=float(x @ y) / den if den > 0 else None,
                max_abs=float(np.max(np.abs(e))) if e.size else 0.0,
            )
        )
    fa = qa = None
    per_class: dict[int, dict] = {}
    if has_labels:
        lab = np.array([int(v) for v in labels], np.int64)  # type: ignore[union-attr]
        fpred = np.array([o.float_pred for o in outcomes])
        qpred = np.array([o.quant_pred for o in outcomes])
        fa, qa = float(np.mean(fpred == lab)), float(np.mean(qpred == lab))
        for c in np.unique(lab):
            m = lab == c
            fc, qc = float(np.mean(fpred[m] == c)), float(np.mean(qpred[m] == c))
            per_class[int(c)] = {"count": int(m.sum()), "float_accuracy": fc, "quant_accuracy": qc, "drop_pct": 100.0 * (fc - qc)}
    classification = kind == "classification"
    return TaskResult(
        kind=kind,
        num_samples=n,
        float_accuracy=fa,
        quant_accuracy=qa,
        top1_agreement=float(f_top1.mean()) if classification else None,
        top5_agreement=float(agree5.mean()) if classification else None,
        outcomes=tuple(outcomes),
        per_class=per_class,
        class_names=tuple(class_names) if class_names else None,
    )


def task_summary(task: TaskResult, worst: int = 5) -> str:
    """A few readable lines for the CLI."""
    pct = lambda v: "n/a" if v is None else f"{100 * v:.2f}%"  # noqa: E731
    lines = [f"task ({task.kind}, {task.num_samples} samples):"]
    if task.kind == "classification":
        if task.float_accuracy is not None:
            lines.append(
                f"  accuracy float {pct(task.float_accuracy)}  quantized {pct(task.quant_accuracy)}  "
                f"drop {task.accuracy_drop_pct:.2f} points"
            )
        lines.append(f"  top-1 agreement {pct(task.top1_agreement)}  top-5 agreement {pct(task.top5_agreement)}")
    for o in task.worst(worst):
        flip = f" FLIPPED {o.float_pred}->{o.quant_pred}" if o.flipped else ""
        label = "" if o.label is None else f" label {o.label}"
        s = "inf" if math.isinf(o.output_sqnr_db) else f"{o.output_sqnr_db:.1f}"
        lines.append(f"  worst #{o.index} {o.source}{label}: output SQNR {s} dB{flip}")
    return "\n".join(lines)
