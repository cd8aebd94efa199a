"""Which files are Keras models: decided from the path alone, without importing TensorFlow
(the GUI's open dialog and the CLI dispatch call it on every path)."""

from __future__ import annotations

import os
from pathlib import Path

from inspector.core.errors import InputError

# The quantized twins `convert` can make (TF converter modes).
MODES = ("int8", "int8-io", "a16w8", "fp16", "dynamic")

KERAS_SUFFIXES = {".keras": "keras", ".h5": "h5", ".hdf5": "h5"}
# The published form, and the same extra from a clone of the repository (README "Installing with pip").
INSTALL_HINT = "pip install 'tflite-inspector[tensorflow]' (from a clone: pip install '.[tensorflow]')"


def keras_format(path: str | os.PathLike[str] | None) -> str | None:
    """'keras', 'h5' or 'saved_model' for a Keras file or a SavedModel folder, else None."""
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        return "saved_model" if (p / "saved_model.pb").is_file() or (p / "saved_model.pbtxt").is_file() else None
    return KERAS_SUFFIXES.get(p.suffix.lower())


def is_keras_path(path: str | os.PathLike[str] | None) -> bool:
    return keras_format(path) is not None


def check_model_input(path: str | os.PathLike[str] | None) -> None:
    """InputError (one line naming the path) for a Keras file that does not exist or a folder that
    is not a SavedModel, before any worker or TensorFlow starts; other paths are left to their
    readers. Folders are never `.tflite` models, so the folder message holds for every command."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        if keras_format(p) is None:
            raise InputError("a folder that is not a SavedModel (no saved_model.pb in it); give a .tflite, .keras or .h5 "
                             "file or a SavedModel folder", str(path))  # fmt: skip
    elif p.suffix.lower() in KERAS_SUFFIXES and not p.exists():
        raise InputError("no such file", str(path))
