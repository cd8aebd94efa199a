"""The one place TensorFlow, tf-keras and tfmot are imported (in the worker process, once).

tfmot works with tf-keras (Keras 2), not Keras 3: `TF_USE_LEGACY_KERAS=1` must be set before
TensorFlow is first imported, so this module sets it and imports TensorFlow itself. Without the
`[tensorflow]` extra the caller gets one InputError line saying what to install. The import
runs inside `tf_logs.quiet_tf()`: TensorFlow's start-up log lines never reach the terminal.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import Any

from inspector.core.errors import InputError
from inspector.core.keras.detect import INSTALL_HINT
from inspector.core.keras.tf_logs import quiet_tf, silence_python_loggers


@dataclass(frozen=True)
class TF:
    tf: Any
    keras: Any  # tf_keras
    tfmot: Any | None  # None when tensorflow-model-optimization is missing (no QAT models)

    @property
    def versions(self) -> dict[str, str | None]:
        return {
            "tensorflow": self.tf.__version__,
            "tf_keras": getattr(self.keras, "__version__", None),
            "tensorflow_model_optimization": None if self.tfmot is None else _tfmot_version(),
        }


_loaded: TF | None = None


def tensorflow_loaded() -> bool:
    """Whether this process has imported TensorFlow already (the next import is free)."""
    return _loaded is not None


def import_tensorflow(path: str | None = None) -> TF:
    """TensorFlow with tf-keras (and tfmot when installed); InputError naming `path` without them."""
    global _loaded
    if _loaded is not None:
        return _loaded
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # what TF still honours; the rest: quiet_tf
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        with quiet_tf():
            import tensorflow as tf
            import tf_keras
    except ImportError as e:
        if getattr(sys, "frozen", False):  # the PyInstaller bundle is built without TensorFlow
            raise InputError(f"the packaged app does not include TensorFlow; for Keras/SavedModel models install the wheel: {INSTALL_HINT}", path) from None
        raise InputError(f"opening Keras/SavedModel models needs TensorFlow and tf-keras ({_missing(e)}): {INSTALL_HINT}", path) from None
    try:
        with quiet_tf():
            import tensorflow_model_optimization as tfmot
    except ImportError:
        tfmot = None
    tf.get_logger().setLevel("ERROR")
    silence_python_loggers()
    _loaded = TF(tf, tf_keras, tfmot)
    return _loaded


def _missing(e: ImportError) -> str:
    """What the failed import lacks, by package name: the module ImportError names, else the one
    of tensorflow / tf_keras that cannot be found, else the import's own first line."""
    import importlib.util

    if e.name:
        return f"{e.name.split('.')[0]} is missing"
    for module in ("tensorflow", "tf_keras"):
        try:
            if importlib.util.find_spec(module) is None:
                return f"{module} is missing"
        except (ImportError, ValueError):
            return f"{module} is missing"
    first = (str(e).strip().splitlines() or ["ImportError"])[0]
    return f"they are installed but do not import: {first[:200]}"


def _tfmot_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("tensorflow-model-optimization")
    except Exception:  # noqa: BLE001 - a version string is informative only
        return None
