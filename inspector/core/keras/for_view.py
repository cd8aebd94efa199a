"""Opening a Keras model where the app expects a `.tflite` (the GUI's model A): its float twin
gives the structure the panes, pairing and tables need, and the Keras model itself is what the
Keras comparison runs. The twins are made once per model content and tool version in the twin
cache (`twin_cache`), in the worker process, and serve `info`, `report` and the app alike; a QAT
model also gets its int8 twin from its own ranges, which its QAT ranges are shown beside until a
model B is open.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from inspector.core.keras.convert import make_twins
from inspector.core.keras.info import keras_info
from inspector.core.keras.load import load_keras
from inspector.core.keras.twin_cache import (
    INFO_FILE,
    read_json,
    store_json,
    twin_folder,
)
from inspector.core.keras.twin_cache import cached_twins as twins_in_cache
from inspector.core.keras.twin_cache import default_cache_root as default_cache_root
from inspector.core.progress import TaskState, as_task

QAT_TWIN_NOTE = "int8 twin converted from the QAT ranges"


def cached_twins(path: str, cache_root: str | os.PathLike[str] | None = None, task: TaskState | None = None) -> dict[str, Any]:
    """`make_twins`' result for the model (its float twin; a QAT model's int8 twin from its own
    ranges): from the twin cache (`twin_cache`) when this model's content was converted before by
    this tool version, else converted now and kept there."""
    task = as_task(task)
    folder = twin_folder(path, cache_root)
    twins = twins_in_cache(folder)
    if twins is None:
        loaded = load_keras(path, task.span(0.0, 0.3))
        twins = make_twins(path, str(folder), ["int8"] if loaded.is_qat else [], task=task.span(0.3, 1.0))
    return twins


def open_for_view(path: str, cache_root: str | None = None, task: TaskState | None = None) -> dict[str, Any]:
    """{"path", "float_twin", "int8_twin" (QAT models, else None), "info" (`keras_info` beside the
    int8 twin)}: from the twin cache when this model's content was converted before by this tool
    version, else converted now and kept there."""
    task = as_task(task)
    task.report(0.0, "looking for converted twins in the cache")
    folder = twin_folder(path, cache_root)
    twins = cached_twins(path, cache_root, task.span(0.0, 0.85))
    int8 = twins["quantized"].get("int8")
    info = read_json(folder / INFO_FILE)
    if info is None or info.get("tflite") != int8:
        task.report(0.85, "reading the QAT ranges")
        info = keras_info(path, int8)
        store_json(folder / INFO_FILE, info)
    info["path"] = path  # the cache is keyed by content: the same model may sit elsewhere now
    task.report(1.0, "twins ready")
    return {"path": path, "float_twin": twins["float"], "int8_twin": int8, "info": info}


def info_for_cli(path: str, tflite_path: str | None = None, cache_root: str | None = None, task: TaskState | None = None) -> dict[str, Any]:
    """`info MODEL [--tflite T]` for a Keras model: beside the named TFLite model (computed each
    time), or beside the int8 twin from the twin cache (made once per model content)."""
    if tflite_path is not None:
        return keras_info(path, tflite_path, task=task)
    src = open_for_view(path, cache_root, task)
    return _for_cli(src["info"], src["int8_twin"])


def cached_info_for_cli(path: str, cache_root: str | None = None) -> dict[str, Any] | None:
    """`info_for_cli(path)` when the twin cache has it, else None: no TensorFlow, no worker
    process (the caller runs `info_for_cli` in the worker on a miss)."""
    folder = twin_folder(path, cache_root)
    twins = twins_in_cache(folder)
    info = read_json(folder / INFO_FILE)
    if twins is None or info is None:
        return None
    int8 = twins["quantized"].get("int8")
    if info.get("tflite") != int8:
        return None
    info["path"] = path
    return _for_cli(info, int8)


def _for_cli(info: dict[str, Any], int8: str | None) -> dict[str, Any]:
    info = dict(info)
    if int8 is not None and info.get("tflite") == int8:
        info["tflite"] = QAT_TWIN_NOTE  # the cached twin's path is no file the user knows
    return info


def keras_source_of(twin_path: str) -> str | None:
    """The Keras model a float twin was made from (its `*.twins.json` beside it), if it still
    exists: a session or a recent file that reopens the twin finds its Keras model again."""
    folder = Path(twin_path).parent
    for manifest in folder.glob("*.twins.json"):
        try:
            d = json.loads(manifest.read_text())
            same = Path(d["float"]).resolve() == Path(twin_path).resolve()
            src = d["provenance"]["source_model"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if same and os.path.exists(src):
            return str(src)
    return None
