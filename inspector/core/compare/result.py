"""Result objects of a layerwise comparison, with the JSON form of the `compare` contract.

JSON (issue 3): {"float", "quant", "runtime", "samples", "layers": [{"op_index", "op_type",
"tensor_name", "float_tensor", "quant_tensor", "match", "metrics": {...}, "isolated": null|{...}}],
"unmatched": [...], "outputs": [{"name", "metrics"}]}, extended (never renamed) with the quantized
tensor's parameters, observed float range, per-channel SQNR, runtime description and timing, and
(issue 25) each layer's and output's "channels" and a concatenation's "slices" (`inside`).
Infinite SQNR (equal tensors) is written as null. `from_json` reloads what `to_json` wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from inspector.core.compare.diagnosis_types import Diagnosis, RootCause
from inspector.core.compare.inside import ChannelStats, SliceStats
from inspector.core.compare.layer_lookup import LayersByOp
from inspector.core.compare.pair_check import PairCheck
from inspector.core.compare.task import TaskResult, task_metrics
from inspector.core.compare.task_slices import slice_regression
from inspector.core.stats.metrics import Metrics

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LayerResult:
    op_index: int  # quantized model op, execution order
    op_type: str
    tensor_name: str  # the quantized model's output tensor name
    float_tensor: int
    quant_tensor: int
    match: str  # "name" | "structure" | "graph_output" ...
    metrics: Metrics
    isolated: Metrics | None = None
    isolated_note: str | None = None  # why isolated is null, when it is
    float_op_index: int | None = None
    dtype: str = ""
    shape: tuple[int, ...] = ()
    scale: tuple[float, ...] | None = None
    zero_point: tuple[int, ...] | None = None
    quantized_dimension: int | None = None
    float_min: float | None = None  # observed range of the float reference over all samples
    float_max: float | None = None
    diagnosis: Diagnosis | None = None  # why the layer is bad and the edit for it (`diagnosis.py`)
    channels: ChannelStats | None = None  # per channel along the channel axis (`inside`)
    slices: tuple[SliceStats, ...] | None = None  # a CONCATENATION / PACK: per input slice

    @property
    def num_elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

    def to_json(self) -> dict:
        return {
            "op_index": self.op_index,
            "op_type": self.op_type,
            "tensor_name": self.tensor_name,
            "float_tensor": self.float_tensor,
            "quant_tensor": self.quant_tensor,
            "match": self.match,
            "metrics": self.metrics.to_json(),
            "isolated": None if self.isolated is None else self.isolated.to_json(),
            "isolated_note": self.isolated_note,
            "float_op_index": self.float_op_index,
            "dtype": self.dtype,
            "shape": list(self.shape),
            "num_elements": self.num_elements,
            "scale": None if self.scale is None else list(self.scale),
            "zero_point": None if self.zero_point is None else list(self.zero_point),
            "quantized_dimension": self.quantized_dimension,
            "float_min": self.float_min,
            "float_max": self.float_max,
            "diagnosis": None if self.diagnosis is None else self.diagnosis.to_json(),
            **_inside_json(self.channels, self.slices),
        }

    @classmethod
    def from_json(cls, d: dict) -> LayerResult:
        metrics = Metrics.from_json(d["metrics"])
        return cls(
            op_index=d["op_index"],
            op_type=d["op_type"],
            tensor_name=d["tensor_name"],
            float_tensor=d["float_tensor"],
            quant_tensor=d["quant_tensor"],
            match=d["match"],
            metrics=metrics,
            isolated=None if d.get("isolated") is None else Metrics.from_json(d["isolated"]),
            isolated_note=d.get("isolated_note"),
            float_op_index=d.get("float_op_index"),
            dtype=d.get("dtype", ""),
            shape=tuple(d.get("shape", ())),
            scale=None if d.get("scale") is None else tuple(d["scale"]),
            zero_point=None if d.get("zero_point") is None else tuple(d["zero_point"]),
            quantized_dimension=d.get("quantized_dimension"),
            float_min=d.get("float_min"),
            float_max=d.get("float_max"),
            diagnosis=None if d.get("diagnosis") is None else Diagnosis.from_json(d["diagnosis"]),
            **_inside_from_json(d),
        )


@dataclass(frozen=True)
class OutputResult:
    name: str  # signature output name, else tensor name
    float_tensor: int
    quant_tensor: int
    metrics: Metrics
    channels: ChannelStats | None = None
    slices: tuple[SliceStats, ...] | None = None  # read from a concatenation

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "metrics": self.metrics.to_json(),
            "float_tensor": self.float_tensor,
            "quant_tensor": self.quant_tensor,
            **_inside_json(self.channels, self.slices),
        }

    @classmethod
    def from_json(cls, d: dict) -> OutputResult:
        return cls(d["name"], d.get("float_tensor", -1), d.get("quant_tensor", -1), Metrics.from_json(d["metrics"]),
                   **_inside_from_json(d))


def _inside_json(channels: ChannelStats | None, slices: tuple[SliceStats, ...] | None) -> dict:
    """ "channels" (null when not measured) and, for a concatenation, "slices"."""
    out: dict = {"channels": None if channels is None else channels.to_json()}
    if slices is not None:
        out["slices"] = [s.to_json() for s in slices]
    return out


def _inside_from_json(d: dict) -> dict:
    ch, sl = d.get("channels"), d.get("slices")
    return {"channels": None if ch is None else ChannelStats.from_json(ch),
            "slices": None if sl is None else tuple(SliceStats.from_json(s) for s in sl)}


@dataclass(frozen=True)
class KeptValues:
    """A downsampled set of (float, dequantized) element pairs of one quantized tensor."""

    float_values: np.ndarray  # float32, 1-D
    quant_values: np.ndarray  # float32, 1-D, dequantized
    total: int  # elements seen over all samples


@dataclass(frozen=True)
class PerSampleOutputs:
    """Model outputs of every sample: float reference and dequantized quantized values."""

    names: tuple[str, ...]
    float: tuple[tuple[np.ndarray, ...], ...]  # [sample][output]
    quant: tuple[tuple[np.ndarray, ...], ...]

    def float_outputs(self, k: int = 0) -> list[np.ndarray]:
        return [s[k] for s in self.float]

    def quant_outputs(self, k: int = 0) -> list[np.ndarray]:
        return [s[k] for s in self.quant]

    def to_json(self) -> dict:
        return {
            "names": list(self.names),
            "float": [[a.tolist() for a in s] for s in self.float],
            "quant": [[a.tolist() for a in s] for s in self.quant],
        }

    @classmethod
    def from_json(cls, d: dict) -> PerSampleOutputs:
        def arrs(rows):
            return tuple(tuple(np.asarray(a, np.float32) for a in s) for s in rows)

        return cls(tuple(d["names"]), arrs(d["float"]), arrs(d["quant"]))


@dataclass(frozen=True)
class ComparisonResult(LayersByOp[LayerResult]):
    float_path: str
    quant_path: str
    runtime: str  # "optimized" | "reference"
    kernels: str  # what ran, in words
    samples: int
    layers: tuple[LayerResult, ...]
    unmatched: tuple[dict, ...]
    outputs: tuple[OutputResult, ...]
    isolated: bool = False
    seed: int = 0
    inputs: str = ""  # description of the sample source
    labels: tuple[int | None, ...] = ()
    sources: tuple[str, ...] = ()
    class_names: tuple[str, ...] | None = None
    per_sample_outputs: PerSampleOutputs | None = None
    kept: dict[int, KeptValues] = field(default_factory=dict)  # quant tensor -> values
    elapsed_s: float = 0.0
    task_kind: str | None = None  # the user's choice: "classification" | "regression" | None = per output, below
    task_json: dict | None = None  # task metrics of a result loaded from JSON without per-sample outputs
    samples_are_random: bool = False  # random inputs: task numbers and clipping say little (banner)
    pair_check: PairCheck | None = None  # is the pair a float model and its quantized twin?
    swapped: bool = False  # the caller swapped the models it was given (A was the quantized one)
    signature: str | None = None  # the signature compared (its subgraph); None: subgraph 0
    output_kinds: tuple[tuple[str, str], ...] = ()  # (kind, reason) per output, from the graph (`task_kind`)
    reference: str = ""  # what B was measured against, when not a plain float model (`compare.reference`)
    state: str = ""  # a stateful model: what was done with its state (`runtime.model_state.state_note`); "" none
    root_causes: tuple[RootCause, ...] = ()  # measured blame, largest share first (`requantize.blame`)
    blame_note: str = ""  # how blame was measured, or why not ("" when not asked)

    def task(self, output: int = 0) -> TaskResult | None:
        """Task-level metrics (accuracy, agreement, worst samples) of model output `output`."""
        pso = self.per_sample_outputs
        if pso is None or not pso.float:
            return None
        labels = self.labels if self.labels and all(v is not None for v in self.labels) else None
        kind, reason = self.task_kind, ""
        if kind is not None:
            reason = f"--task {kind} (chosen by the user)"
        elif output < len(self.output_kinds):
            kind, reason = self.output_kinds[output]
        t = task_metrics(
            pso.float_outputs(output),
            pso.quant_outputs(output),
            labels=labels,
            sources=self.sources or None,
            kind=kind,
            class_names=self.class_names,
            reason=reason,
            name=pso.names[output] if output < len(pso.names) else "",
        )
        sl = self.outputs[output].slices if output < len(self.outputs) else None
        if t.regression is not None and sl:  # a concatenated output: per slice too (issue 25)
            whole = self.outputs[output].metrics.sqnr_db
            t = replace(t, slices=slice_regression(pso.float_outputs(output), pso.quant_outputs(output), sl, whole))
        return t

    def task_outputs(self) -> list[dict[str, Any]]:
        """Each model output's task kind and headline figures (regression metrics or agreement)."""
        pso = self.per_sample_outputs
        if pso is None or not pso.float:
            return []
        rows = []
        for k, name in enumerate(pso.names):
            t = self.task(k)
            assert t is not None
            row: dict[str, Any] = {"name": name, "kind": t.kind, "reason": t.reason, "warnings": t.warnings}
            if t.regression is not None:
                row.update({key: v for key, v in t.regression.to_json().items() if key != "name"})
            else:
                row.update({"top1_agreement": t.top1_agreement, "top5_agreement": t.top5_agreement,
                            "tied_samples": t.tied_samples, "lost_decisions": t.lost_decisions,
                            "agreement_note": t.agreement_note})  # fmt: skip
            rows.append(row)
        return rows

    def layer_for_tensor(self, quant_tensor: int) -> LayerResult | None:
        """The layer measured at B's tensor `quant_tensor` (`layer_for_op`: by B's op index)."""
        for layer in self.layers:
            if layer.quant_tensor == quant_tensor:
                return layer
        return None

    def to_json(self, include_per_sample: bool = False) -> dict:
        d: dict[str, Any] = {
            "float": self.float_path,
            "quant": self.quant_path,
            "runtime": self.runtime,
            "samples": self.samples,
            "layers": [layer.to_json() for layer in self.layers],
            "unmatched": list(self.unmatched),
            "outputs": [o.to_json() for o in self.outputs],
            "schema_version": SCHEMA_VERSION,
            "kernels": self.kernels,
            "isolated_run": self.isolated,
            "seed": self.seed,
            "inputs": self.inputs,
            "labels": list(self.labels),
            "sources": list(self.sources),
            "class_names": None if self.class_names is None else list(self.class_names),
            "elapsed_s": round(self.elapsed_s, 4),
            "samples_are_random": self.samples_are_random,
            "swapped": self.swapped,
            "pair_check": None if self.pair_check is None else self.pair_check.to_json(),
            "signature": self.signature,
            "reference": self.reference,
            "stateful": bool(self.state),
            "state": self.state,
            "root_causes": [r.to_json() for r in self.root_causes],
            "blame_note": self.blame_note,
        }
        task = self.task()
        d["task"] = task.to_json() if task is not None else self.task_json
        if task is not None:
            d["task"]["outputs"] = self.task_outputs()
        if include_per_sample and self.per_sample_outputs is not None:
            d["per_sample_outputs"] = self.per_sample_outputs.to_json()
        return d

    @classmethod
    def from_json(cls, d: dict) -> ComparisonResult:
        pso = d.get("per_sample_outputs")
        return cls(
            float_path=d["float"],
            quant_path=d["quant"],
            runtime=d["runtime"],
            kernels=d.get("kernels", ""),
            samples=d["samples"],
            layers=tuple(LayerResult.from_json(x) for x in d["layers"]),
            unmatched=tuple(d.get("unmatched", ())),
            outputs=tuple(OutputResult.from_json(x) for x in d["outputs"]),
            isolated=bool(d.get("isolated_run", False)),
            seed=d.get("seed", 0),
            inputs=d.get("inputs", ""),
            labels=tuple(d.get("labels", ())),
            sources=tuple(d.get("sources", ())),
            class_names=None if d.get("class_names") is None else tuple(d["class_names"]),
            per_sample_outputs=None if pso is None else PerSampleOutputs.from_json(pso),
            elapsed_s=d.get("elapsed_s", 0.0),
            task_kind=None if (d.get("task") or {}).get("outputs") else (d.get("task") or {}).get("kind"),
            task_json=d.get("task"),
            samples_are_random=bool(d.get("samples_are_random", False)),
            pair_check=None if d.get("pair_check") is None else PairCheck.from_json(d["pair_check"]),
            swapped=bool(d.get("swapped", False)),
            signature=d.get("signature"),
            output_kinds=tuple((o["kind"], o.get("reason", "")) for o in (d.get("task") or {}).get("outputs") or ()),
            reference=d.get("reference", ""),
            state=d.get("state", ""),
            root_causes=tuple(RootCause.from_json(r) for r in d.get("root_causes") or ()),
            blame_note=d.get("blame_note", ""),
        )
