"""QAT variables -> scales: each QuantizeLayer / QuantizeWrapper's min/max variables, what the
converter makes of them (`qat_math`), and the converted model's actual tensor parameters beside
them, with findings where they part or where a range wastes the int8 grid.

Reading the variables needs the loaded Keras model (worker process); `attach_tflite` works on
plain data and a parsed `.tflite`, so it is testable without TensorFlow.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.keras.naming import LayerPairing, TensorRef
from inspector.core.keras.qat_math import (
    RELATIVE_TOLERANCE,
    WASTED_GRID_FINDING,
    activation_params,
    relative_difference,
    wasted_share,
    weight_scales,
)
from inspector.core.keras.qat_variables import param_counts, read_variables, variable_rows
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import ACTIVATION_OPS, WEIGHT_OPS

ACTIVATION_VARS = ("post_activation", "pre_activation", "output")  # a QuantizeLayer's own pair is "input"
WEIGHT_VARS = ("kernel", "depthwise_kernel")


@dataclass
class QatLayer:
    layer: str
    type: str  # QuantizeLayer | QuantizeWrapperV2 ...
    wrapped: str | None  # the wrapped layer's class (Dense, Conv2D, ...)
    relu_output: bool  # the layer's output is a ReLU's (values never below 0)
    variables: dict[str, Any]  # short name -> float or list (per channel)
    activation_kind: str | None = None  # "post_activation" | "pre_activation" | "output" | "input"
    activation_prefix: str | None = None  # the variables' prefix: <prefix>_min, <prefix>_max
    tflite: dict[str, Any] | None = None
    all_variables: list[dict[str, Any]] = field(default_factory=list)  # every weight (`qat_variables.read_variables`)
    findings: list[str] = field(default_factory=list)
    finding_roles: list[str] = field(default_factory=list)  # "activation" | "weights", one per finding

    @property
    def activation(self) -> dict[str, Any] | None:
        if self.activation_kind is None:
            return None
        prefix = self.activation_prefix
        lo, hi = float(self.variables[f"{prefix}_min"]), float(self.variables[f"{prefix}_max"])
        scale, zp = activation_params(lo, hi)
        return {"kind": self.activation_kind, "min": lo, "max": hi, "scale": scale, "zero_point": zp,
                "wasted_share": wasted_share(lo, hi) if self.relu_output else None}  # fmt: skip

    @property
    def weights(self) -> dict[str, Any] | None:
        if "kernel_min" not in self.variables:
            return None
        lo = np.asarray(self.variables["kernel_min"], np.float64)
        hi = np.asarray(self.variables["kernel_max"], np.float64)
        return {"min": lo.tolist(), "max": hi.tolist(), "scale": weight_scales(lo, hi).tolist(),
                "zero_point": 0, "per_channel": lo.ndim > 0 and lo.size > 1}  # fmt: skip

    def note(self, role: str, text: str) -> None:
        """A finding about the layer's activation range or its weights."""
        self.findings.append(text)
        self.finding_roles.append(role)

    def to_json(self) -> dict[str, Any]:
        """Hand-written (not `codec.json_record`): the ranges, scales and parameter counts derived from the variables."""
        act, w = self.activation, self.weights
        for part, role in ((act, "activation"), (w, "weights")):  # each range also says its own findings
            if part is not None:
                part["findings"] = [f for f, r in zip(self.findings, self.finding_roles, strict=True) if r == role]
        d: dict[str, Any] = {
            "layer": self.layer,
            "type": self.type,
            "wrapped": self.wrapped,
            "variables": self.variables,
            "activation": act,
            "weights": w,
            "tflite": self.tflite,
            "findings": list(self.findings),
        }
        d["all_variables"] = [dict(v) for v in self.all_variables]
        d["params"] = param_counts(self.all_variables)
        d["qat_variables"] = variable_rows(d)
        return d


def _short(var_name: str) -> str:
    return var_name.split("/")[-1].split(":")[0]


def _value(v: Any) -> float | list[float]:
    a = np.asarray(v.numpy() if hasattr(v, "numpy") else v)
    return a.tolist() if a.ndim else (int(a) if a.dtype.kind in "iu" else float(a))


def read_qat_layers(model: Any) -> list[QatLayer]:
    """Every QuantizeLayer / QuantizeWrapper of a loaded QAT model, in layer order."""
    out = []
    for layer in model.layers:
        kind = type(layer).__name__
        if not kind.startswith(("QuantizeLayer", "QuantizeWrapper")):
            continue
        inner = getattr(layer, "layer", None)
        vars_ = {}
        for v in layer.weights:
            short = _short(v.name)
            if short.endswith(("_min", "_max")) or short == "optimizer_step":
                vars_[short] = _value(v)
        prefix = next((p for p in ACTIVATION_VARS if f"{p}_min" in vars_ and f"{p}_max" in vars_), None)
        act = prefix
        if prefix is None and kind.startswith("QuantizeLayer"):  # quantize_layer_min, or <layer name>_min
            prefix = next((k[:-4] for k in vars_ if k.endswith("_min") and f"{k[:-4]}_max" in vars_ and k[:-4] not in WEIGHT_VARS), None)
            act = None if prefix is None else "input"
        q = QatLayer(layer.name, kind, None if inner is None else type(inner).__name__, _is_relu(inner), vars_, act, prefix)
        q.all_variables = read_variables(layer)
        out.append(q)
    return out


def _is_relu(inner: Any) -> bool:
    if inner is None:
        return False
    if type(inner).__name__ == "ReLU":
        return True
    act = getattr(inner, "activation", None)
    act = getattr(act, "activation", act)  # tfmot's QuantizeAwareActivation wraps the original
    return getattr(act, "__name__", "") in ("relu", "relu6")


def _tensor_params(qm: Model, ref: TensorRef | int) -> dict[str, Any]:
    t = qm.main.tensors[ref.tensor if isinstance(ref, TensorRef) else ref]
    q = t.quantization
    d: dict[str, Any] = {"tensor": t.index, "name": t.name, "dtype": t.dtype, "scale": None, "zero_point": None}
    if q is not None and q.scales:
        d["scale"] = list(q.scales) if q.per_channel else q.scales[0]
        d["zero_point"] = list(q.zero_points) if q.per_channel else q.zero_points[0]
    if isinstance(ref, TensorRef):
        d["op_index"], d["op_type"] = ref.op_index, ref.op_type
    return d


def _activation_ref(layer: QatLayer, pairing: LayerPairing) -> TensorRef | None:
    if layer.activation_kind == "pre_activation":
        refs = [r for r in pairing.named_in.get(layer.layer, []) if r.op_type not in ACTIVATION_OPS]
        return refs[-1] if refs else None
    return pairing.paired.get(layer.layer)


def attach_tflite(layers: list[QatLayer], qm: Model, pairing: LayerPairing) -> None:
    """Set each layer's `tflite` parameters (from `qm`, paired by tensor names) and findings."""
    for layer in layers:
        layer.findings.clear()
        layer.finding_roles.clear()
        info: dict[str, Any] = {}
        act = layer.activation
        ref = _activation_ref(layer, pairing) if act is not None else None
        if ref is not None and act is not None:  # ref: found for an activation range only
            info["activation"] = a = _tensor_params(qm, ref)
            if a["scale"] is None:
                layer.note("activation", f"activation tensor '{a['name']}' is not quantized in the TFLite model")
            else:
                d = relative_difference(act["scale"], a["scale"])
                if d > RELATIVE_TOLERANCE or a["zero_point"] != act["zero_point"]:
                    layer.note(
                        "activation",
                        f"{act['kind']} range [{act['min']:.6g}, {act['max']:.6g}] gives scale {act['scale']:.8g}, "
                        f"zero point {act['zero_point']}; the TFLite tensor '{a['name']}' has {a['scale']:.8g}, "
                        f"{a['zero_point']} (relative difference {d:.2e}): the converter did not use the QAT range")  # fmt: skip
        elif act is not None:
            layer.note("activation", f"no TFLite tensor carries the layer name '{layer.layer}'")
        if act is not None and act["wasted_share"] is not None and act["wasted_share"] >= WASTED_GRID_FINDING:
            layer.note(
                "activation",
                f"ReLU output with QAT min {act['min']:.3g}: {100 * act['wasted_share']:.0f}% of the int8 steps "
                f"are spent on values below 0 that never occur")  # fmt: skip
        w = layer.weights
        op_ref = next((r for r in pairing.named_in.get(layer.layer, []) if r.op_type in WEIGHT_OPS), None)
        if w is not None and op_ref is not None:
            kernel = qm.main.ops[op_ref.op_index].inputs[1]
            info["weights"] = k = _tensor_params(qm, kernel)
            if k["scale"] is not None:
                d = relative_difference(w["scale"], k["scale"])
                k["relative_difference"] = d
                if d > RELATIVE_TOLERANCE:
                    layer.note(
                        "weights",
                        f"kernel range gives weight scale(s) {_fmt(w['scale'])}; the TFLite weights '{k['name']}' have "
                        f"{_fmt(k['scale'])} (relative difference {d:.2e}): the converter did not use the QAT range")  # fmt: skip
        if "activation" in info and info["activation"]["scale"] is not None and act is not None:
            info["activation"]["relative_difference"] = relative_difference(act["scale"], info["activation"]["scale"])
        layer.tflite = info or None


def _fmt(v: Any) -> str:
    a = np.asarray(v, np.float64).reshape(-1)
    head = ", ".join(f"{x:.6g}" for x in a[:3])
    return head + (f", ... ({a.size} channels)" if a.size > 3 else "")
