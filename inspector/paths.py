"""Where bundled resources live: `inspector/resources/`, inside the package.

One lookup for every way the app runs: a source tree, an installed wheel (package data) and the
PyInstaller bundle (whose spec copies them to `inspector/resources` beside the frozen modules,
where `__file__` points) all find them next to this file.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path


def resources_dir() -> Path:
    return Path(__file__).resolve().parent / "resources"


def example_pair() -> tuple[Path, Path]:
    ex = resources_dir() / "examples"
    return ex / "example_float.tflite", ex / "example_int8.tflite"


def example_inputs() -> Path:
    return resources_dir() / "examples" / "example_inputs.npz"


def is_example_pair(float_path: str | Path, quant_path: str | Path) -> bool:
    """Whether the two files are the bundled example pair: the installed files, or copies of them
    anywhere (same bytes), so a copy opened from another folder runs on the bundled inputs too."""
    return all(same_bytes(p, e) for p, e in zip((float_path, quant_path), example_pair(), strict=True))


def same_bytes(path: str | Path, reference: Path) -> bool:
    """Same size, then the same SHA-256; decided once per version of the two files (their
    stat), so a caller may ask often: the GUI asks on each of a comparison's ~200 progress
    reports whether the pair is the bundled example."""
    try:
        a, b = os.stat(path), os.stat(reference)
    except OSError:
        return False
    if a.st_size != b.st_size:
        return False
    return _same_versions(str(path), a.st_ino, a.st_mtime_ns, a.st_size, str(reference), b.st_ino, b.st_mtime_ns, b.st_size)


@functools.lru_cache(maxsize=64)
def _same_versions(path: str, _ino: int, mtime_ns: int, size: int, reference: str, _rino: int, rmtime_ns: int, rsize: int) -> bool:
    try:
        return _sha256(str(Path(path).resolve()), mtime_ns, size) == _sha256(str(Path(reference).resolve()), rmtime_ns, rsize)
    except OSError:
        return False


@functools.lru_cache(maxsize=32)
def _sha256(path: str, _mtime_ns: int, _size: int) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def example_hint() -> str:
    """Where the bundled example pair and its inputs are (a pip install puts them inside the
    package), and how to open it: the command, or File > Open the example pair in the app."""
    f, q = example_pair()
    return "\n".join([
        f"The bundled example pair (a digits classifier, float and int8, with 192 labelled inputs) is in {f.parent}:",
        f"  tflite-inspector {f} {q}",
        f"  tflite-inspector compare {f} {q}   (uses {example_inputs().name} from there)",
        "or in the app: File > Open the example pair, or drop the two .tflite files on the window.",
    ])


def app_icon() -> Path:
    return resources_dir() / "icons" / "tflite-inspector.png"


def user_cache_dir() -> Path:
    """The per-user cache folder (XDG on Linux, LOCALAPPDATA on Windows, Library/Caches on macOS)."""
    import os

    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tflite-inspector"


VERSIONS_KEEP_DAYS = 30
VERSIONS_PREFIX = "tqi-versions-"


def in_versions_cache(path: str | Path) -> bool:
    """True inside a folder of requantized versions: auto-purged after VERSIONS_KEEP_DAYS, so
    never where a save dialog should start (the user's file would vanish with it)."""
    try:
        p = Path(path).resolve()
    except OSError:
        return False
    return any(part.startswith(VERSIONS_PREFIX) for part in p.parts) or p.is_relative_to(user_cache_dir() / "versions")


def in_app_cache(path: str | Path) -> bool:
    """True for a file the app made in its own caches (versions, Keras float twins): not a
    file the user opened, so never a recent file or a last folder."""
    try:
        p = Path(path).resolve()
    except OSError:
        return False
    return in_versions_cache(p) or p.is_relative_to(user_cache_dir().resolve())


def new_versions_folder(keep_days: float = VERSIONS_KEEP_DAYS) -> Path:
    """A fresh folder for requantized versions, under the user cache so that sessions and crash
    recovery still find the files after a restart (a temp folder may be wiped at boot). Version
    folders untouched for `keep_days` are removed first, so the cache does not grow forever."""
    import shutil
    import tempfile
    import time

    root = user_cache_dir() / "versions"
    try:
        root.mkdir(parents=True, exist_ok=True)
        cutoff = time.time() - keep_days * 86400
        for old in root.glob("tqi-versions-*"):
            try:
                newest = max([old.stat().st_mtime] + [p.stat().st_mtime for p in old.iterdir()])
                if newest < cutoff:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                continue
        return Path(tempfile.mkdtemp(prefix="tqi-versions-", dir=root))
    except OSError:  # read-only home: fall back to the system temp folder
        return Path(tempfile.mkdtemp(prefix="tqi-versions-"))
