"""Making a Keras / SavedModel model's TFLite twins with TF's TFLiteConverter.

The float twin comes first (no samples needed); the user's samples, read through the float
twin's inputs like any comparison's (`samples.open_source`), are the representative dataset of
the quantized twins. A QAT model's int8 twins come from its own ranges: no representative
dataset is given to the converter for them. Every file goes through the one writer; the
provenance (TF version, converter options per mode, sample source and its hash) is returned
and written beside the models as `<stem>.twins.json`.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.errors import InputError
from inspector.core.keras.detect import MODES
from inspector.core.keras.load import LoadedKeras, load_keras
from inspector.core.keras.tf_logs import quiet_tf
from inspector.core.progress import TaskState, as_task
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.tflite.model import load_model
from inspector.core.writing import atomic_write_bytes, to_json_text

QAT_OWN_RANGES = ("int8", "int8-io")  # modes a QAT model converts from its own ranges


def quiet_stdout() -> contextlib.AbstractContextManager[None]:
    """The converter prints ("Saved artifact at ...", "fully_quantize: 0, ...") and warns; a
    `--json -` reader must see JSON only and the terminal no TensorFlow chatter (`tf_logs`)."""
    return quiet_tf()


def converter_for(loaded: LoadedKeras) -> Any:
    tf = loaded.tf.tf
    if loaded.model is not None:
        return tf.lite.TFLiteConverter.from_keras_model(loaded.model)
    return tf.lite.TFLiteConverter.from_saved_model(loaded.path)


def configure(conv: Any, mode: str | None, tf: Any, rep: Any, qat: bool) -> dict[str, Any]:
    """Set the converter up for `mode` (None: float); the options, as provenance."""
    opts: dict[str, Any] = {"optimizations": [], "representative_dataset": False}
    if mode is None:
        return opts
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    opts["optimizations"] = ["DEFAULT"]
    if mode in ("int8", "int8-io", "a16w8") and not (qat and mode in QAT_OWN_RANGES):
        conv.representative_dataset = rep
        opts["representative_dataset"] = True
    if mode in ("int8", "int8-io") and not qat:
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        opts["supported_ops"] = ["TFLITE_BUILTINS_INT8"]
    if mode == "int8-io":
        conv.inference_input_type = conv.inference_output_type = tf.int8
        opts["inference_input_type"] = opts["inference_output_type"] = "int8"
    if mode == "a16w8":
        conv.target_spec.supported_ops = [tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8]
        opts["supported_ops"] = ["EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"]
    if mode == "fp16":
        conv.target_spec.supported_types = [tf.float16]
        opts["supported_types"] = ["float16"]
    if qat and mode in QAT_OWN_RANGES:
        opts["ranges"] = "QAT variables (no representative dataset)"
    return opts


def convert_mode(loaded: LoadedKeras, mode: str | None, rep: Any) -> tuple[bytes, dict[str, Any]]:
    """One conversion (`mode` None: float) -> (model bytes, the converter options used)."""
    conv = converter_for(loaded)
    opts = configure(conv, mode, loaded.tf.tf, rep, loaded.is_qat)
    try:
        with quiet_stdout():
            data = conv.convert()
    except Exception as e:  # noqa: BLE001 - the converter raises many types
        raise InputError(f"the TFLite converter failed for {mode or 'float'}: {converter_error(e)}", loaded.path) from None
    return bytes(data), opts


def converter_error(e: BaseException) -> str:
    """The converter's own error line (its message is pages of MLIR locations)."""
    lines = str(e).strip().splitlines()
    errors = [ln.rsplit("error: ", 1)[1] for ln in lines if "error: " in ln]
    text = errors[0] if errors else (lines[-1] if lines else "")
    return f"{type(e).__name__}: {text[:300]}"


def _samples(float_path: str, settings: SampleSettings) -> tuple[list[list[np.ndarray]], str, str]:
    fm = load_model(float_path)
    source = open_source(fm, None, settings)
    rows: list[list[np.ndarray]] = []
    digest = hashlib.sha256()
    for s in source:
        row = [np.ascontiguousarray(v, np.float32 if v.dtype.kind == "f" else v.dtype) for v in s.inputs]
        for v in row:
            digest.update(str(v.dtype).encode() + str(v.shape).encode() + v.tobytes())
        rows.append(row)
    if not rows:
        raise InputError("no samples for the representative dataset", settings.source)
    return rows, source.description, digest.hexdigest()


def make_twins(
    model_path: str,
    out_dir: str,
    modes: Sequence[str] = ("int8",),
    settings: SampleSettings | None = None,
    task: TaskState | None = None,
    named_in: str | None = None,
) -> dict[str, Any]:
    """Write the float twin and one quantized twin per mode into `out_dir`; the `--json` dict.
    `named_in`: the folder the files will have been moved to when the command succeeds (the
    command line stages them in a temporary folder): the result and the provenance name it."""
    task = as_task(task)
    settings = settings or SampleSettings()
    for m in modes:
        if m not in MODES:
            raise InputError(f"unknown quantization mode '{m}'; choose from {', '.join(MODES)}")
    loaded = load_keras(model_path, task.span(0.0, 0.05))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = Path(model_path.rstrip("/")).stem
    steps = 1 + len(modes)
    task.report(0.05, "converting the float twin")
    data, opts = convert_mode(loaded, None, None)
    float_path = str(out / f"{stem}_float.tflite")
    atomic_write_bytes(float_path, data)
    options = {"float": opts}
    need = [m for m in modes if configure_needs_samples(m, loaded.is_qat)]
    rows, described, digest = _samples(float_path, settings) if need else ([], None, None)
    if not need and settings.source is not None:
        # A QAT model's int8 twins need no samples, but inputs the user named must still fit the
        # model: read them through the float twin's inputs, which names a mismatch in one line.
        task.report(0.1, "checking the inputs against the model")
        _samples(float_path, settings)

    def rep() -> Iterator[list[np.ndarray]]:
        yield from rows

    final = Path(named_in) if named_in is not None else out

    def named(path: str) -> str:
        return str(final / Path(path).name)

    quantized = {}
    for i, mode in enumerate(dict.fromkeys(modes)):
        task.report((1 + i) / steps, f"converting the {mode} twin")
        data, opts = convert_mode(loaded, mode, rep)
        path = str(out / f"{stem}_{mode.replace('-', '_')}.tflite")
        atomic_write_bytes(path, data)
        quantized[mode] = named(path)
        options[mode] = opts
    provenance = {
        "source_model": str(Path(model_path).resolve()),
        "source_format": loaded.format,
        "qat": loaded.is_qat,
        "versions": loaded.tf.versions,
        "converter_options": options,
        "notes": _qat_notes(quantized) if loaded.is_qat else [],
        "samples": None if not need else {"settings": settings.to_json(), "description": described, "count": len(rows), "sha256": digest},
    }
    result = {"float": named(float_path), "quantized": quantized, "provenance": provenance}
    atomic_write_bytes(str(out / f"{stem}.twins.json"), (to_json_text(result) + "\n").encode())
    task.report(1.0, "twins written")
    return result


def _qat_notes(quantized: dict[str, str]) -> list[str]:
    notes = ["the float twin of a QAT model keeps its fake quantization as QUANTIZE/DEQUANTIZE pairs: "
             "it is the QAT simulation as trained, in TFLite form"]  # fmt: skip
    if {"dynamic", "fp16"} & set(quantized):
        notes.append("with a QAT model the converter makes full int8 models from its ranges for dynamic and fp16 too")
    return notes


def configure_needs_samples(mode: str, qat: bool) -> bool:
    return mode in ("int8", "int8-io", "a16w8") and not (qat and mode in QAT_OWN_RANGES)
