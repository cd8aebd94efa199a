"""Task-level metrics: from output error to the accuracy a user actually loses.

Inputs are the model outputs per sample (float reference and dequantized quantized), plus
optional labels. Classification outputs (`task_kind`: a SOFTMAX/LOGISTIC producer, labels or
class names, or the user's choice) get accuracy, agreement and per-class drop; regression
outputs get MAE, RMSE and max error (`regression.py`); both get per-sample SQNR and cosine.

Definitions (one place, used by CLI, GUI and reports):
- tied: a sample whose largest score occurs more than once in a model's output (argmax is then
  an arbitrary pick: the model did not decide); constant: a model's output is the same for every
  sample (>= 2 samples).
- top1_agreement: share of the samples the float model decides (not tied in A) where the
  quantized model decides the same class; a sample tied in B where A decides is a disagreement
  (B lost the decision). Only samples tied in A are left out; None, with `agreement_note`, when
  A is tied in every sample.
- top5_agreement: share of the same samples where the float model's class is among the
  quantized model's top-k whatever the order of ties (at most k classes score >= it), k =
  min(5, number of classes).
- accuracy: share of samples the model decides (not tied) with the label's class; a tied sample
  counts as wrong, as it counts as a disagreement; drop = float - quantized accuracy, in
  percentage points.
- worst samples: classification: flipped predictions first (A decides and B decides another
  class or is tied), then by lowest per-sample output SQNR; regression: by largest RMSE.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from inspector.core.codec.json_record import JsonRecord, encode
from inspector.core.compare.regression import RegressionMetrics, regression_metrics, sample_errors
from inspector.core.compare.task_kind import is_score_vector, normalized_kind
from inspector.core.stats.metrics import sqnr_db
from inspector.core.writing import json_float

KINDS = ("classification", "regression", "other")  # "other": the old name of "regression"


@dataclass(frozen=True)
class SampleOutcome(JsonRecord):
    index: int
    source: str
    label: int | None
    float_pred: int | None
    quant_pred: int | None
    output_sqnr_db: float
    cosine: float | None
    max_abs: float
    mae: float = 0.0
    rmse: float = 0.0
    float_tied: bool = False  # the float output's largest score occurs more than once
    quant_tied: bool = False

    JSON_EXTRA = {"flipped": lambda o: o.flipped}
    JSON_KEYS = ("index", "source", "label", "float_pred", "quant_pred", "output_sqnr_db", "cosine", "max_abs", "flipped",
                 "mae", "rmse", "float_tied", "quant_tied")  # fmt: skip

    @property
    def tied(self) -> bool:
        return self.float_tied or self.quant_tied

    @property
    def flipped(self) -> bool:
        """A decides and B does not decide the same: another class, or a tie (a lost decision)."""
        return self.float_pred is not None and not self.float_tied and (self.quant_tied or self.float_pred != self.quant_pred)

    def to_json(self, class_names: Sequence[str] | None = None) -> dict[str, Any]:
        """The fields (`codec.json_record`) and, given the class names, the names of label and predictions."""
        d = encode(self)
        if class_names:
            d["label_name"] = _name(class_names, self.label)
            d["float_pred_name"] = _name(class_names, self.float_pred)
            d["quant_pred_name"] = _name(class_names, self.quant_pred)
        return d


@dataclass(frozen=True)
class TaskResult:
    kind: str  # "classification" | "regression"
    num_samples: int
    float_accuracy: float | None
    quant_accuracy: float | None
    top1_agreement: float | None
    top5_agreement: float | None
    outcomes: tuple[SampleOutcome, ...]  # in sample order
    per_class: dict[int, dict[str, Any]] = field(default_factory=dict)  # label -> {count, float_accuracy, quant_accuracy, drop}
    class_names: tuple[str, ...] | None = None
    reason: str = ""  # why this kind, in words
    regression: RegressionMetrics | None = None  # regression outputs
    float_constant: bool = False  # the float output is the same for every sample
    quant_constant: bool = False
    agreement_note: str | None = None  # why agreement is None, or what it leaves out
    slices: tuple[Any, ...] = ()  # regression output read from a concatenation: `task_slices.SliceRegression` per slice

    @property
    def accuracy_drop_pct(self) -> float | None:
        if self.float_accuracy is None or self.quant_accuracy is None:
            return None
        return 100.0 * (self.float_accuracy - self.quant_accuracy)

    @property
    def tied_samples(self) -> int:
        """Samples left out of agreement: tied in A (A did not decide)."""
        return sum(o.float_tied for o in self.outcomes) if self.kind == "classification" else 0

    @property
    def lost_decisions(self) -> int:
        """Samples A decides and B is tied in (counted as disagreements)."""
        return sum(o.quant_tied and not o.float_tied for o in self.outcomes) if self.kind == "classification" else 0

    @property
    def agreement_samples(self) -> int:
        """Samples the agreement counts (A decides)."""
        return self.num_samples - self.tied_samples if self.kind == "classification" else 0

    @property
    def agreeing_samples(self) -> int:
        """Samples both models decide, for the same class (the top-1 numerator)."""
        return sum(not o.tied and o.float_pred == o.quant_pred for o in self.outcomes) if self.kind == "classification" else 0

    @property
    def warnings(self) -> list[str]:
        """Outputs that cannot be compared as they are: constant, or argmax ties."""
        out = []
        for who, const in (("float", self.float_constant), ("quantized", self.quant_constant)):
            if const:
                out.append(f"the {who} output is constant: the same for all {self.num_samples} samples")
        if self.kind == "classification":
            ft = sum(o.float_tied for o in self.outcomes)
            qt = sum(o.quant_tied for o in self.outcomes)
            if ft or qt:
                lost = self.lost_decisions
                said = ([f"{ft} tied in float left out of agreement"] if ft else []) + (
                    [f"{lost} tied in quantized only: lost decisions (disagreements, wrong for accuracy)"] if lost else [])
                out.append(f"argmax tied in {sum(o.tied for o in self.outcomes)} of {self.num_samples} samples "
                           f"(float {ft}, quantized {qt}): {'; '.join(said) or 'tied in both'}")  # fmt: skip
        out += [s.warning() for s in self.slices if s.collapsed]
        return out

    def worst(self, n: int = 10) -> list[SampleOutcome]:
        if self.kind == "regression":
            return sorted(self.outcomes, key=lambda o: (-o.rmse, o.index))[:n]
        return sorted(self.outcomes, key=_worst_key)[:n]

    def to_json(self, worst: int = 10) -> dict[str, Any]:
        """Hand-written: the task's figures (accuracy drop, agreement, worst samples, per class), not its fields."""
        names = self.class_names
        d = {
            "kind": self.kind,
            "reason": self.reason,
            "num_samples": self.num_samples,
            "float_accuracy": self.float_accuracy,
            "quant_accuracy": self.quant_accuracy,
            "accuracy_drop_pct": self.accuracy_drop_pct,
            "top1_agreement": self.top1_agreement,
            "top5_agreement": self.top5_agreement,
            "agreement_samples": self.agreement_samples,
            "tied_samples": self.tied_samples,
            "lost_decisions": self.lost_decisions,
            "agreement_note": self.agreement_note,
            "float_constant": self.float_constant,
            "quant_constant": self.quant_constant,
            "warnings": self.warnings,
            "worst_samples": [o.to_json(names) for o in self.worst(worst)],
            "per_class": [
                {"label": k, "name": _name(names, k), **v} for k, v in sorted(self.per_class.items())
            ],
            "per_sample_sqnr_db": [json_float(o.output_sqnr_db) for o in self.outcomes],
        }
        if self.regression is not None:
            d.update({k: v for k, v in self.regression.to_json().items() if k != "name"})
            d["output"] = self.regression.name
        if self.slices:
            d["slices"] = [s.to_json() for s in self.slices]
        return d


def _name(names: Sequence[str] | None, k: int | None) -> str | None:
    if names is None or k is None or not 0 <= k < len(names):
        return None
    return names[k]


def _worst_key(o: SampleOutcome) -> tuple[Any, ...]:
    s = o.output_sqnr_db
    return (not o.flipped, s if not math.isnan(s) else math.inf, o.index)


def _tied(v: np.ndarray) -> bool:
    return v.size > 1 and int(np.count_nonzero(v == v.max())) > 1


def _constant(outputs: Sequence[np.ndarray]) -> bool:
    first = np.asarray(outputs[0])
    return len(outputs) > 1 and all(np.array_equal(first, np.asarray(o)) for o in outputs[1:])


def task_metrics(
    float_outputs: Sequence[np.ndarray],
    quant_outputs: Sequence[np.ndarray],
    labels: Sequence[int | None] | None = None,
    sources: Sequence[str] | None = None,
    kind: str | None = None,
    class_names: Sequence[str] | None = None,
    reason: str = "",
    name: str = "",
) -> TaskResult:
    """Task metrics over samples; outputs[i] is one sample's (dequantized) output array.
    `kind` None: classification when labels or class names are given (and the output is a
    vector of scores), else regression."""
    n = len(float_outputs)
    if len(quant_outputs) != n:
        raise ValueError(f"{n} float outputs but {len(quant_outputs)} quantized outputs")
    if n == 0:
        raise ValueError("no samples")
    if kind is None:
        labelled = (labels is not None and any(v is not None for v in labels)) or bool(class_names)
        vector = is_score_vector(np.shape(float_outputs[0]))
        kind = "classification" if labelled and vector else "regression"
        reason = reason or ("labels or class names were given" if kind == "classification" else "no labels and no graph to look at")
    kind = normalized_kind(kind)
    classification = kind == "classification"
    has_labels = labels is not None and all(lbl is not None for lbl in labels) and classification
    outcomes = []
    for i in range(n):
        x = np.asarray(float_outputs[i], np.float64).ravel()
        y = np.asarray(quant_outputs[i], np.float64).ravel()
        e = x - y
        den = math.sqrt(float(x @ x) * float(y @ y))
        fp = qp = None
        ftie = qtie = False
        if classification:
            fp, qp = int(np.argmax(x)), int(np.argmax(y))
            ftie, qtie = _tied(x), _tied(y)
        mae, rmse = sample_errors(x, y)
        outcomes.append(
            SampleOutcome(
                index=i,
                source=sources[i] if sources else f"sample {i}",
                label=None if labels is None or (lbl := labels[i]) is None else int(lbl),
                float_pred=fp,
                quant_pred=qp,
                output_sqnr_db=sqnr_db(float(x @ x), float(e @ e)),
                cosine=float(x @ y) / den if den > 0 else None,
                max_abs=float(np.max(np.abs(e))) if e.size else 0.0,
                mae=mae,
                rmse=rmse,
                float_tied=ftie,
                quant_tied=qtie,
            )
        )
    fa = qa = None
    per_class: dict[int, dict[str, Any]] = {}
    if has_labels:
        lab = np.array([int(v) for v in cast(Sequence[int], labels)], np.int64)  # has_labels: every label set
        # a tied argmax is no decision: never the label's class (-1)
        fpred = np.array([-1 if o.float_tied else o.float_pred for o in outcomes])
        qpred = np.array([-1 if o.quant_tied else o.quant_pred for o in outcomes])
        fa, qa = float(np.mean(fpred == lab)), float(np.mean(qpred == lab))
        for c in np.unique(lab):
            m = lab == c
            fc, qc = float(np.mean(fpred[m] == c)), float(np.mean(qpred[m] == c))
            per_class[int(c)] = {"count": int(m.sum()), "float_accuracy": fc, "quant_accuracy": qc, "drop_pct": 100.0 * (fc - qc)}
    top1 = top5 = None
    note = None
    if classification:
        top1, top5, note = _agreement(float_outputs, quant_outputs, outcomes)
    return TaskResult(
        kind=kind,
        num_samples=n,
        float_accuracy=fa,
        quant_accuracy=qa,
        top1_agreement=top1,
        top5_agreement=top5,
        outcomes=tuple(outcomes),
        per_class=per_class,
        class_names=tuple(class_names) if class_names else None,
        reason=reason,
        regression=None if classification else regression_metrics(float_outputs, quant_outputs, name),
        float_constant=_constant(float_outputs),
        quant_constant=_constant(quant_outputs),
        agreement_note=note,
    )


def _agreement(float_outputs: Sequence[np.ndarray], quant_outputs: Sequence[np.ndarray],
               outcomes: list[SampleOutcome]) -> tuple[float | None, float | None, str | None]:
    """Top-1 and top-5 agreement over the samples the float model decides (B tied: a disagreement)."""
    counted = [o for o in outcomes if not o.float_tied]
    tied = len(outcomes) - len(counted)
    if not counted:
        return None, None, f"argmax tied in all {tied} samples of the float model: no predicted class to compare"
    a1 = a5 = 0
    for o in counted:
        y = np.asarray(quant_outputs[o.index], np.float64).ravel()
        a1 += not o.quant_tied and o.float_pred == o.quant_pred
        a5 += int(np.count_nonzero(y >= y[o.float_pred])) <= min(5, y.size)
    notes = []
    if tied:
        notes.append(f"{tied} of {len(outcomes)} samples left out: the float argmax is tied")
    lost = sum(o.quant_tied for o in counted)
    if lost:
        notes.append(f"{lost} of {len(counted)} counted samples tied in the quantized model: disagreements (lost decisions)")
    return a1 / len(counted), a5 / len(counted), "; ".join(notes) or None
