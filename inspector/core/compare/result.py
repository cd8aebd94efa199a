"""Result objects of a layerwise comparison, with the JSON form of the `compare` contract.

JSON (issue 3): {"float", "quant", "runtime", "samples", "layers": [{"op_index", "op_type",
"tensor_name", "float_tensor", "quant_tensor", "match", "metrics": {...}, "isolated": null|{...}}],
"unmatched": [...], "outputs": [{"name", "metrics"}]}, extended (never renamed) with the quantized
tensor's parameters, observed float range, per-channel SQNR, runtime description and timing, and
(issue 25) each layer's and output's "channels" and a concatenation's "slices" (`inside`).
Infinite SQNR (equal tensors) is written as null. `from_json` reloads what `to_json` wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from inspector.core.codec.json_record import JsonRecord, decode, encode, json_field
from inspector.core.compare.diagnosis_types import Diagnosis, RootCause
from inspector.core.compare.inside import ChannelStats, SliceStats
from inspector.core.compare.layer_lookup import LayersByOp
from inspector.core.compare.pair_check import PairCheck
from inspector.core.compare.task import TaskResult, task_metrics
from inspector.core.compare.task_slices import slice_regression
from inspector.core.stats.metrics import Metrics

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class LayerResult(JsonRecord):
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
    slices: tuple[SliceStats, ...] | None = json_field(default=None, omit_none=True)  # a CONCATENATION / PACK: per input slice

    JSON_EXTRA = {"num_elements": lambda layer: layer.num_elements}
    JSON_KEYS = ("op_index", "op_type", "tensor_name", "float_tensor", "quant_tensor", "match", "metrics", "isolated",
                 "isolated_note", "float_op_index", "dtype", "shape", "num_elements", "scale", "zero_point",
                 "quantized_dimension", "float_min", "float_max", "diagnosis", "channels", "slices")  # fmt: skip

    @property
    def num_elements(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) if self.shape else 1

@dataclass(frozen=True)
class OutputResult(JsonRecord):
    name: str  # signature output name, else tensor name
    float_tensor: int = json_field(absent=-1)
    quant_tensor: int = json_field(absent=-1)
    metrics: Metrics = json_field()
    channels: ChannelStats | None = None
    slices: tuple[SliceStats, ...] | None = json_field(default=None, omit_none=True)  # read from a concatenation

    JSON_KEYS = ("name", "metrics", "float_tensor", "quant_tensor", "channels", "slices")

@dataclass(frozen=True)
class KeptValues:
    """A downsampled set of (float, dequantized) element pairs of one quantized tensor."""

    float_values: np.ndarray  # float32, 1-D
    quant_values: np.ndarray  # float32, 1-D, dequantized
    total: int  # elements seen over all samples


@dataclass(frozen=True)
class PerSampleOutputs(JsonRecord):
    """Model outputs of every sample: float reference and dequantized quantized values."""

    names: tuple[str, ...]
    float: tuple[tuple[np.ndarray, ...], ...]  # [sample][output]
    quant: tuple[tuple[np.ndarray, ...], ...]

    def float_outputs(self, k: int = 0) -> list[np.ndarray]:
        return [s[k] for s in self.float]

    def quant_outputs(self, k: int = 0) -> list[np.ndarray]:
        return [s[k] for s in self.quant]

@dataclass(frozen=True)
class ComparisonResult(LayersByOp[LayerResult], JsonRecord):
    float_path: str = json_field(key="float")
    quant_path: str = json_field(key="quant")
    runtime: str = json_field()  # "optimized" | "reference"
    kernels: str = json_field(absent="")  # what ran, in words
    samples: int = json_field()
    layers: tuple[LayerResult, ...] = json_field()
    unmatched: tuple[dict[str, Any], ...] = json_field(absent=())
    outputs: tuple[OutputResult, ...] = json_field()
    isolated: bool = json_field(default=False, key="isolated_run")
    seed: int = 0
    inputs: str = ""  # description of the sample source
    labels: tuple[int | None, ...] = ()
    sources: tuple[str, ...] = ()
    class_names: tuple[str, ...] | None = None
    per_sample_outputs: PerSampleOutputs | None = json_field(default=None, skip=True)  # written on request (`to_json`)
    kept: dict[int, KeptValues] = json_field(default_factory=dict, skip=True)  # quant tensor -> values
    elapsed_s: float = json_field(default=0.0, ndigits=4)
    # the user's choice: "classification" | "regression" | None = per output, below
    task_kind: str | None = json_field(default=None, skip=True)
    task_json: dict[str, Any] | None = json_field(default=None, skip=True)  # task metrics of a result loaded from JSON without per-sample outputs
    samples_are_random: bool = False  # random inputs: task numbers and clipping say little (banner)
    pair_check: PairCheck | None = None  # is the pair a float model and its quantized twin?
    swapped: bool = False  # the caller swapped the models it was given (A was the quantized one)
    signature: str | None = None  # the signature compared (its subgraph); None: subgraph 0
    # (kind, reason) per output, from the graph (`task_kind`)
    output_kinds: tuple[tuple[str, str], ...] = json_field(default=(), skip=True)
    reference: str = ""  # what B was measured against, when not a plain float model (`compare.reference`)
    state: str = ""  # a stateful model: what was done with its state (`runtime.model_state.state_note`); "" none
    root_causes: tuple[RootCause, ...] = ()  # measured blame, largest share first (`requantize.blame`)
    blame_note: str = ""  # how blame was measured, or why not ("" when not asked)

    JSON_EXTRA = {"schema_version": lambda r: SCHEMA_VERSION, "stateful": lambda r: bool(r.state)}
    JSON_KEYS = ("float", "quant", "runtime", "samples", "layers", "unmatched", "outputs", "schema_version", "kernels",
                 "isolated_run", "seed", "inputs", "labels", "sources", "class_names", "elapsed_s", "samples_are_random",
                 "swapped", "pair_check", "signature", "reference", "stateful", "state", "root_causes", "blame_note")  # fmt: skip

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

    def to_json(self, include_per_sample: bool = False) -> dict[str, Any]:
        """The fields (`codec.json_record`) and "task": computed from the per-sample outputs, not a field."""
        d: dict[str, Any] = encode(self)
        task = self.task()
        d["task"] = task.to_json() if task is not None else self.task_json
        if task is not None:
            d["task"]["outputs"] = self.task_outputs()
        if include_per_sample and self.per_sample_outputs is not None:
            d["per_sample_outputs"] = self.per_sample_outputs.to_json()
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ComparisonResult:
        """The fields (`codec.json_record`); the task's kind and the outputs' kinds read from "task"."""
        pso, task = d.get("per_sample_outputs"), d.get("task") or {}
        return decode(
            cls, d,
            per_sample_outputs=None if pso is None else PerSampleOutputs.from_json(pso),
            task_kind=None if task.get("outputs") else task.get("kind"),
            task_json=d.get("task"),
            output_kinds=tuple((o["kind"], o.get("reason", "")) for o in task.get("outputs") or ()),
        )
