"""Where a Keras model's TFLite twins (and its `info`) are kept between commands.

Converting a Keras model costs seconds to minutes (importing TensorFlow, loading the model, one
conversion per twin), so the twins made for one command (`info`, `report`, opening the model in
the app) serve the next. The cache folder is keyed by what decides the twins' bytes: the model's
content (a SHA-256 of the file, or of a SavedModel folder's files and their relative paths), the
tool's version with a digest of this package's code (a development change of the conversion
misses the old entries), and the installed TensorFlow's version (read from its metadata, without
importing it). A model copied elsewhere, or touched without a change, hits the same entry.
Folders live under `~/.cache/tflite-inspector/keras-twins/` (`XDG_CACHE_HOME` honoured).
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

from inspector.core.writing import to_json_text, write_cache_file

INFO_FILE = "info.json"  # keras_info of the model beside its int8 twin (no --tflite)
_CHUNK = 1 << 20


def default_cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "tflite-inspector" / "keras-twins"


def _files(path: Path) -> list[Path]:
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path]


def _stat_key(path: Path) -> tuple[Any, ...]:
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in _files(path))


@lru_cache(maxsize=32)
def _digest(resolved: str, stat_key: tuple[Any, ...]) -> str:
    root = Path(resolved)
    h = hashlib.sha256()
    for p in _files(root):
        if root.is_dir():  # names inside a SavedModel folder count, a file's own name does not
            h.update(str(p.relative_to(root)).encode() + b"\0")
        with open(p, "rb") as f:
            while chunk := f.read(_CHUNK):
                h.update(chunk)
        h.update(b"\0")
    return h.hexdigest()


def content_digest(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a model file or SavedModel folder (file names inside a folder count; a
    file's own name does not). Computed once per process while the files are unchanged."""
    p = Path(path).resolve()
    return _digest(str(p), _stat_key(p))


@lru_cache(maxsize=1)
def tool_fingerprint() -> str:
    """The tool's version, a digest of `inspector/core/keras/*.py` and TensorFlow's version."""
    from importlib.metadata import PackageNotFoundError, version

    from inspector import __version__

    h = hashlib.sha256(__version__.encode())
    for src in sorted(Path(__file__).parent.glob("*.py")):
        h.update(src.name.encode() + src.read_bytes())
    for dist in ("tensorflow", "tf-keras", "tensorflow-model-optimization"):
        try:
            h.update(f"{dist}={version(dist)}".encode())
        except PackageNotFoundError:
            h.update(f"{dist}=none".encode())
    return h.hexdigest()


def twin_folder(path: str | os.PathLike[str], cache_root: str | os.PathLike[str] | None = None) -> Path:
    key = hashlib.sha256((content_digest(path) + tool_fingerprint()).encode()).hexdigest()[:16]
    return Path(cache_root or default_cache_root()) / key


def read_json(p: Path) -> dict[str, Any] | None:
    """A cached JSON file, or None when it is missing or unreadable (then it is remade)."""
    try:
        d = json.loads(p.read_text())
    except (OSError, ValueError):
        return None
    return d if isinstance(d, dict) else None


def cached_twins(folder: Path) -> dict[str, Any] | None:
    """The twins manifest in `folder` (`<stem>.twins.json`, the stem of whichever copy of the
    model was converted first) when every file it names is still there."""
    for manifest in sorted(folder.glob("*.twins.json")):
        d: Any = read_json(manifest)  # JSON: this module's manifest, checked by reading it
        try:
            files = [d["float"], *d["quantized"].values()]
        except (KeyError, AttributeError, TypeError):
            continue
        if isinstance(d, dict) and all(isinstance(f, str) and os.path.exists(f) for f in files):
            return d
    return None


def store_json(p: Path, d: dict[str, Any]) -> None:
    """A cache file, not an output of the command (`writing.write_cache_file`)."""
    write_cache_file(str(p), (to_json_text(d) + "\n").encode())
