"""The result of comparing a Keras model with a TFLite model: the usual `ComparisonResult`
(same JSON schema) plus what only a Keras model has: the layer each op pairs with, the layers
with no tensor in B, and the first layer where B departs from the QAT simulation.

JSON: `ComparisonResult.to_json()` with `"float": {"format": "keras", "path", ...}` instead of a
path, `"keras_layer"` on each layer, the unmatched Keras layers in `"unmatched"` (with
`"side": "keras"`), and `"first_departure"` (null when no layer departs, or for a float model).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.core.compare.result import ComparisonResult

STEP_LIMIT = 1.0 + 1e-3  # int8 steps of B's tensor beyond which B departs from the QAT simulation (a 1-step rounding tie is not a departure)


@dataclass(frozen=True)
class KerasComparison:
    result: ComparisonResult
    keras_layers: dict[int, str]  # B's op index -> the Keras layer it pairs with
    float_info: dict[str, Any]  # format, path, keras_format, qat, versions
    first_departure: dict[str, Any] | None = None
    layer_steps: dict[int, float] = field(default_factory=dict)  # op index -> max |error| in B's steps
    unmatched_layers: tuple[dict[str, Any], ...] = ()  # {"side": "keras", "keras_layer", "keras_class", "reason"}

    def reference_line(self) -> str:
        return f"reference: {self.result.reference}"

    def to_json(self, include_per_sample: bool = False) -> dict[str, Any]:
        """Hand-written (not `codec.json_record`): the comparison's JSON with the Keras facts added to its layers."""
        d = self.result.to_json(include_per_sample)
        d["float"] = dict(self.float_info)
        for layer in d["layers"]:
            layer["keras_layer"] = self.keras_layers.get(layer["op_index"])
            layer["max_error_steps"] = self.layer_steps.get(layer["op_index"])
        d["unmatched"] = list(d["unmatched"]) + [dict(u) for u in self.unmatched_layers]
        d["first_departure"] = self.first_departure
        return d


def first_departure(result: ComparisonResult, keras_layers: dict[int, str], qat: bool) -> tuple[dict[str, Any] | None, dict[int, float]]:
    """The first layer (B's execution order) whose largest error exceeds one step of B's
    tensor, for a QAT model (a float model departs everywhere by design: None)."""
    steps: dict[int, float] = {}
    first = None
    for layer in sorted(result.layers, key=lambda x: x.op_index):
        if not layer.scale or len(layer.scale) != 1 or layer.scale[0] <= 0:
            continue
        s = layer.metrics.max_abs / layer.scale[0]
        steps[layer.op_index] = s
        if qat and first is None and s > STEP_LIMIT:
            first = {"op_index": layer.op_index, "op_type": layer.op_type, "keras_layer": keras_layers.get(layer.op_index),
                     "tensor_name": layer.tensor_name, "max_abs": layer.metrics.max_abs, "scale": layer.scale[0],
                     "steps": s}  # fmt: skip
    return first, steps
