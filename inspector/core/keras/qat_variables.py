"""Every variable of a QAT layer, named, with what it becomes in the `.tflite`.

model.summary() of a QAT model shows 3 more parameters on the QuantizeLayer and 5 more
non-trainable ones on each wrapped Dense than the float model has. They are:
- QuantizeLayer: `quantize_layer_min`, `quantize_layer_max` (the input range: the input
  QUANTIZE's scale S and zero point Z), `optimizer_step`;
- QuantizeWrapperV2: `kernel_min`, `kernel_max` (the weight scale S2 = max(|min|, |max|)/127,
  Z2 = 0), `post_activation_min/max` (the output's S3/Z3), or `pre_activation_min/max` when a
  softmax follows (S3/Z3 of the tensor before it), and `optimizer_step`.
`optimizer_step` reaches nothing in the `.tflite`. tfmot (0.8.1) creates it at −1 and never
writes it: it does not count training steps; its value is read and shown as it is.

Reading needs the loaded model (worker); the rows are plain data (`VariableRow`) so the CLI,
the GUI's Keras / QAT tab and the report show the same thing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

OPTIMIZER_STEP_INITIAL = -1  # tfmot's initializer for optimizer_step


def read_variables(layer: Any) -> list[dict[str, Any]]:
    """Every weight of a Keras layer: short name, trainable, shape, dtype, size and (scalars and
    min/max ranges) value."""
    out = []
    for v in layer.weights:
        short = v.name.split("/")[-1].split(":")[0]
        shape = [int(d) for d in v.shape]
        size = int(np.prod(shape)) if shape else 1
        value: Any = None
        if size == 1 or short.endswith(("_min", "_max")):  # scalars and ranges (kernels and biases: their shape)
            a = np.asarray(v.numpy())
            value = a.tolist() if a.ndim else (int(a) if a.dtype.kind in "iu" else float(a))
        out.append({"name": short, "trainable": bool(v.trainable), "shape": shape, "dtype": v.dtype.name,
                    "size": size, "value": value})
    return out


def param_counts(variables: list[dict[str, Any]]) -> dict[str, int]:
    """{"total", "trainable", "non_trainable"}: model.summary()'s Param # split as it does."""
    t = sum(v["size"] for v in variables if v["trainable"])
    n = sum(v["size"] for v in variables if not v["trainable"])
    return {"total": t + n, "trainable": t, "non_trainable": n}


def _g(v: Any, digits: int = 6) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        a = np.asarray(v, np.float64).reshape(-1)
        return f"{a.min():.{digits}g} … {a.max():.{digits}g} ({a.size} channels)" if a.size > 1 else _g(float(a[0]), digits)
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def optimizer_step_text(value: Any) -> str:
    held = f"holds {value}" if value is not None else "not read"
    if value == OPTIMIZER_STEP_INITIAL:
        return (f"nothing (not in the .tflite). It {held}: tfmot creates it at −1 and (0.8.1) never writes it, "
                "so it does not count training steps")
    return f"nothing (not in the .tflite). It {held} (tfmot creates it at −1; the converter ignores it)"


def becomes(q: dict[str, Any], name: str, value: Any) -> str:
    """What variable `name` of QAT layer `q` (`QatLayer.to_json()`) becomes, with the values."""
    tfl = q.get("tflite") or {}
    act, w = q.get("activation"), q.get("weights")
    ta, tw = tfl.get("activation") or {}, tfl.get("weights") or {}
    if name == "optimizer_step":
        return optimizer_step_text(value)
    if name in ("kernel", "depthwise_kernel"):
        return "B's int8 kernel, r = S2·q"
    if name == "bias":
        return "B's int32 bias, scale S1·S2, zero point 0"
    if name in ("kernel_min", "kernel_max") and w is not None:
        return (f"weight scale S2 = max(|kernel_min|, |kernel_max|)/127 = {_g(w['scale'], 8)}, Z2 = 0"
                + (f"; B's kernel: S2 = {_g(tw.get('scale'), 8)}" if tw else ""))
    if act is not None and name in (f"{act['kind']}_min", f"{act['kind']}_max", "quantize_layer_min", "quantize_layer_max"):
        what = {"input": "the input QUANTIZE's scale S and zero point Z",
                "post_activation": "the output's scale S3 and zero point Z3",
                "pre_activation": "S3/Z3 of the tensor before the activation (what the softmax reads)",
                "output": "the output's scale S3 and zero point Z3"}.get(act["kind"], "a scale and zero point")
        b = f"; B: S = {_g(ta.get('scale'), 8)}, Z = {_g(ta.get('zero_point'))}" if ta else ""
        return f"{what}: S = (max − min)/255 = {_g(act['scale'], 8)}, Z = round(−128 − min/S) = {act['zero_point']}{b}"
    return "—"


def variable_rows(q: dict[str, Any]) -> list[dict[str, Any]]:
    """The layer's variables (`QatLayer.to_json()["qat_variables"]` source), each with `becomes`."""
    return [{**v, "becomes": becomes(q, v["name"], v["value"])} for v in q.get("all_variables") or ()]


def variables_text(info: dict[str, Any]) -> list[str]:
    """`info MODEL.h5`'s lines naming every QAT variable (counts as model.summary() shows them)."""
    if not info.get("qat"):
        return []
    p = info.get("params") or {}
    lines = [f"QAT variables (model.summary(): {p.get('total', 0):,} params, {p.get('trainable', 0):,} trainable, "
             f"{p.get('non_trainable', 0):,} non-trainable):"]
    for q in info["qat"]:
        c = q.get("params") or {}
        lines.append(f"  {q['layer']} ({q['type']}{'(' + q['wrapped'] + ')' if q.get('wrapped') else ''}): "
                     f"{c.get('total', 0):,} params, {c.get('trainable', 0):,} trainable, {c.get('non_trainable', 0):,} non-trainable")
        for v in q.get("qat_variables") or ():
            kind = "trainable" if v["trainable"] else "non-trainable"
            shown = _g(v["value"], 8) if v["value"] is not None else f"{v['shape']}"
            lines.append(f"    {v['name']:<22} {kind:<13} {v['dtype']:<7} {shown:<14} -> {v['becomes']}")
    return lines


def variable_table_rows(info: dict[str, Any]) -> list[tuple[str, ...]]:
    """The Keras / QAT tab's variables table (VARIABLE_COLUMNS)."""
    rows: list[tuple[str, ...]] = []
    for q in info.get("qat") or ():
        for v in q.get("qat_variables") or ():
            rows.append((q["layer"], v["name"], "yes" if v["trainable"] else "no", v["dtype"],
                         _g(v["value"], 8) if v["value"] is not None else f"{v['shape']}", f"{v['size']:,}",
                         v["becomes"]))
    return rows


def variables_caption(info: dict[str, Any]) -> str:
    """The counts model.summary() shows: the model's, then each QAT layer's."""
    if not info.get("qat"):
        return ""
    p = info.get("params") or {}
    parts = [f"{q['layer']} {q['params']['total']:,} ({q['params']['non_trainable']:,} non-trainable)" for q in info["qat"] if q.get("params")]
    return (f"model.summary(): {p.get('total', 0):,} params, {p.get('trainable', 0):,} trainable, {p.get('non_trainable', 0):,} "
            "non-trainable; " + ", ".join(parts))


VARIABLE_COLUMNS = ("Layer", "Variable", "Trainable", "Dtype", "Value", "Params", "Becomes in the .tflite")
