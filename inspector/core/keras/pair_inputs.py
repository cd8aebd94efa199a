"""Do a Keras model and a TFLite model take the same inputs? Checked before anything runs, so a
Keras model paired with the `.tflite` of another model is one line naming both files, not
Keras's own 'Input 0 of layer "model" is incompatible with the layer: ...' from the middle of
the comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.errors import InputError
from inspector.core.tflite.model import Model


def _dims(shape: Any) -> list[int | None]:
    return [None if d is None or int(d) < 0 else int(d) for d in list(shape)[1:]]  # batch left out


def _agree(a: list[int | None], b: list[int | None]) -> bool:
    return len(a) == len(b) and all(x is None or y is None or x == y for x, y in zip(a, b, strict=True))


def _text(shapes: list[list[int | None]]) -> str:
    return ", ".join("[" + ", ".join("?" if d is None else str(d) for d in s) + "]" for s in shapes)


def _tflite_inputs(m: Model) -> list[list[int | None]]:
    sg = m.main
    return [_dims(sg.tensors[i].shape_signature or sg.tensors[i].shape) for i in sg.inputs]


def check_same_inputs(keras_model: Any, qm: Model, keras_path: str, tflite_path: str) -> None:
    """InputError (one line naming both files) when the models' inputs differ in number or in
    shape after the batch dimension."""
    _check([_dims(t.shape) for t in keras_model.inputs], _tflite_inputs(qm), keras_path, tflite_path)


def check_twin_inputs(twin: Model, qm: Model, keras_path: str, tflite_path: str) -> None:
    """The same check from the Keras model's float twin (its inputs are the Keras model's), so
    the pair check, which runs on the twin, names the Keras model and not the cached twin."""
    _check(_tflite_inputs(twin), _tflite_inputs(qm), keras_path, tflite_path)


def _check(ks: list[list[int | None]], ts: list[list[int | None]], keras_path: str, tflite_path: str) -> None:
    if len(ks) == len(ts) and all(_agree(a, b) for a, b in zip(ks, ts, strict=True)):
        return
    raise InputError(f"the Keras model {Path(keras_path.rstrip('/')).name} takes inputs of shape {_text(ks)} (after the batch), "
                     f"this TFLite model {_text(ts)}: it is not a conversion of that Keras model", tflite_path)  # fmt: skip
