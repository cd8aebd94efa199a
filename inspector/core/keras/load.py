"""Loading a Keras model (.keras, .h5, a SavedModel folder) in the worker process.

QAT models load inside tfmot's `quantize_scope()` (it registers QuantizeWrapperV2,
QuantizeLayer and the quantizers). A loaded model is kept per process, keyed by path, size
and modification time, so the convert / info / compare steps of one session load it once.
A SavedModel that is not a Keras model (no Keras metadata) loads as None: it can still be
converted, not compared layer by layer.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.errors import InputError
from inspector.core.keras.detect import check_model_input, keras_format
from inspector.core.keras.tf_import import TF, import_tensorflow, tensorflow_loaded
from inspector.core.keras.tf_logs import quiet_tf
from inspector.core.progress import TaskState, as_task

QAT_LAYER_TYPES = ("QuantizeLayer", "QuantizeWrapper", "QuantizeWrapperV2")


@dataclass(frozen=True)
class LoadedKeras:
    path: str
    format: str  # "keras" | "h5" | "saved_model"
    model: Any  # a tf_keras.Model, or None for a non-Keras SavedModel
    tf: TF

    @property
    def is_qat(self) -> bool:
        return self.model is not None and any(type(layer).__name__ in QAT_LAYER_TYPES for layer in self.model.layers)


_cache: dict[tuple[Any, ...], LoadedKeras] = {}


def _key(path: str) -> tuple[Any, ...]:
    p = Path(path)
    if p.is_dir():
        st = (p / "saved_model.pb").stat() if (p / "saved_model.pb").exists() else p.stat()
    else:
        st = p.stat()
    return (str(p.resolve()), st.st_size, st.st_mtime_ns)


def scope(tf: TF) -> contextlib.AbstractContextManager[Any]:
    """tfmot's quantize scope when tfmot is installed (QAT layers), else a no-op context."""
    return tf.tfmot.quantization.keras.quantize_scope() if tf.tfmot is not None else contextlib.nullcontext()


def load_keras(path: str | os.PathLike[str], task: TaskState | None = None) -> LoadedKeras:
    """The Keras model at `path`; InputError (one line naming the file) when it cannot be read.
    `task` hears the steps that take time: "loading TensorFlow" (first call in the process),
    then "loading the model"."""
    task = as_task(task)
    path = str(path)
    check_model_input(path)
    fmt = keras_format(path)
    if fmt is None:
        if not os.path.exists(path):
            raise InputError("no such file or folder", path)
        raise InputError("not a Keras model (.keras, .h5) or a SavedModel folder", path)
    key = _key(path)
    if key in _cache:
        return _cache[key]
    if not tensorflow_loaded():
        task.report(0.0, "loading TensorFlow")
    tf = import_tensorflow(path)
    task.report(0.6, f"loading the model {Path(path.rstrip('/')).name}")
    model = None
    try:
        with scope(tf), quiet_tf():
            model = tf.keras.models.load_model(path, compile=False)
    except Exception as e:  # noqa: BLE001 - the loaders raise many types; one line for the user
        if fmt == "keras" and "expected" in str(e) and "variables" in str(e):
            raise InputError("tf-keras cannot reload a QAT model saved as .keras (its quantize layers are rebuilt with "
                             "duplicate variables); save it as .h5 or a SavedModel folder", path) from None  # fmt: skip
        if fmt != "saved_model":
            raise InputError(f"cannot load the Keras model ({type(e).__name__}: {_first_line(e)})", path) from None
        try:
            with quiet_tf():
                tf.tf.saved_model.load(path)
        except Exception as e2:  # noqa: BLE001
            raise InputError(f"cannot load the SavedModel ({type(e2).__name__}: {_first_line(e2)})", path) from None
    loaded = LoadedKeras(path, fmt, model, tf)
    _cache.clear()  # one model per process: Keras models hold their weights in memory
    _cache[key] = loaded
    return loaded


def require_keras_model(loaded: LoadedKeras) -> Any:
    if loaded.model is None:
        raise InputError("this SavedModel has no Keras metadata: it can be converted, not compared layer by layer", loaded.path)
    return loaded.model


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0][:200] if text else ""
