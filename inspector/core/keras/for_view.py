"""Opening a Keras model where the app expects a `.tflite` (the GUI's model A): its float twin
gives the structure the panes, pairing and tables need, and the Keras model itself is what the
Keras comparison runs. The twins are made once per model file (keyed by path, size and
modification time) in a cache folder, in the worker process; a QAT model also gets its int8
twin from its own ranges, which its QAT ranges are shown beside until a model B is open.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from inspector.core.keras.convert import make_twins
from inspector.core.keras.info import keras_info
from inspector.core.keras.load import _key, load_keras
from inspector.core.progress import TaskState, as_task


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tflite-inspector" / "keras-twins"


def twin_folder(path: str, cache_root: str | os.PathLike[str] | None = None) -> Path:
    key = hashlib.sha256(repr(_key(path)).encode()).hexdigest()[:16]
    return Path(cache_root or default_cache_root()) / key


def cached_twins(path: str, cache_root: str | os.PathLike[str] | None = None, task: TaskState | None = None) -> dict[str, Any]:
    """`make_twins`' result for the model (its float twin; a QAT model's int8 twin from its own
    ranges), made once per model file in the cache folder."""
    folder = twin_folder(path, cache_root)
    manifest = folder / (Path(path.rstrip("/")).stem + ".twins.json")
    if manifest.exists():
        return json.loads(manifest.read_text())
    loaded = load_keras(path)
    return make_twins(path, str(folder), ["int8"] if loaded.is_qat else [], task=task)


def open_for_view(path: str, cache_root: str | None = None, task: TaskState | None = None) -> dict[str, Any]:
    """{"path", "float_twin", "int8_twin" (QAT models, else None), "info" (`keras_info`)}."""
    task = as_task(task)
    twins = cached_twins(path, cache_root, task.span(0.0, 0.8))
    int8 = twins["quantized"].get("int8")
    task.report(0.85, "reading the QAT ranges")
    info = keras_info(path, int8)
    return {"path": path, "float_twin": twins["float"], "int8_twin": int8, "info": info}


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
