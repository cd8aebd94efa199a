"""`info MODEL --json` for a Keras model: its layers and, for a QAT model, what each
QuantizeLayer / QuantizeWrapper's variables become beside the converted TFLite tensors.

The TFLite side is the int8 twin converted from the model's own ranges (in a temporary file),
or a TFLite model the user names (the one they actually exported).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any

from inspector.core.keras.convert import convert_mode
from inspector.core.keras.load import load_keras
from inspector.core.keras.naming import pair_layers
from inspector.core.keras.qat import attach_tflite, read_qat_layers
from inspector.core.keras.qat_variables import param_counts, read_variables, variables_text
from inspector.core.progress import TaskState, as_task
from inspector.core.tflite.model import load_model


def keras_info(path: str, tflite_path: str | None = None, task: TaskState | None = None) -> dict[str, Any]:
    task = as_task(task)
    loaded = load_keras(path, task)
    model = loaded.model
    out: dict[str, Any] = {"format": "keras", "path": path, "keras_format": loaded.format, "qat": [], "layers": [],
                           "versions": loaded.tf.versions, "is_qat": loaded.is_qat, "tflite": None}  # fmt: skip
    if model is None:
        return out
    weights = [v for ly in model.layers for v in read_variables(ly)]
    out["params"] = param_counts(weights)  # model.summary()'s totals
    out["layers"] = [{"name": ly.name, "class": type(ly).__name__, "wrapped": type(getattr(ly, "layer", None)).__name__ if hasattr(ly, "layer") else None,
                      "output_shape": _shape(ly), "params": int(ly.count_params())} for ly in model.layers]  # fmt: skip
    if not loaded.is_qat:
        return out
    qat = read_qat_layers(model)
    tmp = None
    try:
        if tflite_path is None:
            task.report(None, "converting the int8 twin from the QAT ranges")
            data, _ = convert_mode(loaded, "int8", None)
            fd, tmp = tempfile.mkstemp(suffix=".tflite")
            with os.fdopen(fd, "wb") as f:  # a private temporary file, read back and removed here
                f.write(data)
        src = tflite_path or tmp
        assert src is not None  # the twin is written to `tmp` when no file is given
        qm = load_model(src)
        attach_tflite(qat, qm, pair_layers([ly.name for ly in model.layers], qm))
        out["tflite"] = tflite_path or "int8 twin converted from the QAT ranges"
    finally:
        if tmp is not None:
            os.unlink(tmp)
    out["qat"] = [q.to_json() for q in qat]
    return out


def _shape(layer: Any) -> Any:
    try:
        s = layer.output_shape
    except (AttributeError, RuntimeError):
        return None
    return [list(x) for x in s] if isinstance(s, list) else list(s)


def keras_info_text(info: dict[str, Any]) -> str:
    lines = [f"{info['path']}: Keras model ({info['keras_format']}){', quantization-aware (QAT)' if info['is_qat'] else ''}"]
    for ly in info["layers"]:
        kind = ly["class"] + (f"({ly['wrapped']})" if ly["wrapped"] else "")
        lines.append(f"  {ly['name']:<28} {kind:<32} {ly['output_shape']}  {ly['params']} params")
    lines += variables_text(info)
    if info["qat"]:
        lines.append("QAT ranges -> scales" + (f" (beside {info['tflite']})" if info.get("tflite") else "") + ":")
    for q in info["qat"]:
        a, t = q["activation"], (q["tflite"] or {}).get("activation")
        if a is not None:
            got = f"TFLite {t['scale']:.8g}, {t['zero_point']}" if t and t["scale"] is not None else "TFLite: none"
            lines.append(f"  {q['layer']}: {a['kind']} [{a['min']:.6g}, {a['max']:.6g}] -> scale {a['scale']:.8g}, zero point {a['zero_point']}; {got}")
        for f in q["findings"]:
            lines.append(f"    {q['layer']}: finding: {f}")
    return "\n".join(lines)
