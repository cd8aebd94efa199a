"""Models the app prepares from a pair, kept on disk between commands.

Every command is a new process, so the in-process caches (`tflite.rewrite.cached`) start empty
each time: a `compare` of the same pair rebuilt the isolated-error model's parts on every run
(0.1 s on MobileNetV2 160, 0.7 s on a loaded machine, more on a 1,500-op model). `kept` keeps what
`build()` returns under the per-user cache folder (`prepared/`), keyed by:
- the SHA-256 of each model's bytes (a copied or touched file with the same bytes hits the entry;
  a folder: its files and their names). A file's digest is computed once per file version in a
  process and remembered on disk too (`digests/`, keyed by the file's real path, size, mtime,
  ctime and inode: what an edit of the file changes): every command of a pair hashed both files
  in each of its two processes (MobileNetV2: 17 MB, 25-35 ms each time, on the worker's critical
  path),
- what was asked of the build (`extra`: subgraphs, number of parts...),
- the code that builds it: each core module's name, size and mtime (an edited or reinstalled
  source misses the old entries; a frozen app without sources: its version).
The newest `MAX_ENTRIES` entries are kept. Pairs whose files together exceed `MAX_MODEL_BYTES`
are not kept (hashing and storing them costs about what rebuilding does), nor is anything when
`TFLITE_INSPECTOR_NO_DISK_CACHE` is set. A missing, unreadable or corrupt entry is rebuilt; an
entry that cannot be written is not an error. Entries are the user's own files, like the
statistics kernel built beside them.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from inspector.core.tflite.litertlm import model_file_key, read_model_bytes

T = TypeVar("T")
MAX_ENTRIES = 8
MAX_MODEL_BYTES = 256 * 2**20
_FORMAT = 1  # the entries' layout: bump to drop every older entry


def folder() -> Path:
    from inspector.paths import user_cache_dir

    return user_cache_dir() / "prepared"


def content_digest(path: str) -> str:
    """SHA-256 of a model's bytes (a file or a bundle's section), or of a folder's files and
    their relative names (a SavedModel, a folder of images); once per version in a process."""
    if os.path.isdir(path):
        return _folder_digest(os.path.realpath(path), _folder_version(path))
    return _digest(str(path), model_file_key(path))


MAX_DIGESTS = 64  # remembered file digests (the newest)


@functools.lru_cache(maxsize=16)
def _digest(path: str, version: tuple[str | int, ...]) -> str:
    note = None if os.environ.get("TFLITE_INSPECTOR_NO_DISK_CACHE") else _digest_note(version)
    if note is not None:
        try:
            known = note.read_text().strip()
            if len(known) == 64 and all(c in "0123456789abcdef" for c in known):
                return known
        except OSError:
            pass
    digest = hashlib.sha256(read_model_bytes(path)).hexdigest()
    if note is not None:
        _remember(note, digest)
    return digest


def _digest_note(version: tuple[str | int, ...]) -> Path | None:
    """Where the digest of this version of a file is remembered: named by (real path, size, mtime,
    section) and the file's ctime and inode, which no edit leaves unchanged. None: not a file."""
    try:
        st = os.stat(version[0])
    except (OSError, IndexError, TypeError, ValueError):
        return None
    stamp = repr((_FORMAT, *version, st.st_ctime_ns, st.st_ino, st.st_dev))
    return folder() / "digests" / f"{hashlib.sha256(stamp.encode()).hexdigest()[:40]}.txt"


def _remember(note: Path, digest: str) -> None:
    from inspector.core.writing import write_cache_file

    try:  # like an entry: not an output of the command, and a failure is only slower
        note.parent.mkdir(parents=True, exist_ok=True)
        write_cache_file(note, digest.encode())
        notes = sorted(note.parent.glob("*.txt"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in notes[MAX_DIGESTS:]:
            old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
        pass


def _files(folder: str) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*") if p.is_file())


def _folder_version(folder: str) -> tuple[tuple[str, int, int], ...]:
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in _files(folder))


@functools.lru_cache(maxsize=16)
def _folder_digest(folder: str, _version: tuple[tuple[str, int, int], ...]) -> str:
    h = hashlib.sha256()
    for p in _files(folder):
        h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def _size(path: str) -> int:
    return sum(p.stat().st_size for p in _files(path)) if os.path.isdir(path) else int(model_file_key(path)[1])


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """Every `inspector/core` module's name, size and mtime (a frozen app without its sources:
    the package version, read only then: its metadata lookup costs 40 ms)."""
    core = Path(__file__).resolve().parents[1]
    h = hashlib.sha256(f"format {_FORMAT}".encode())
    sources = sorted(core.rglob("*.py"))
    for p in sources:
        st = p.stat()
        h.update(f"{p.relative_to(core)}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    if not sources:
        from inspector import __version__

        h.update(__version__.encode())
    return h.hexdigest()


def kept(kind: str, paths: Sequence[str], extra: tuple[object, ...], build: Callable[[], T], valid: Callable[[T], bool] | None = None) -> T:
    """`build()`'s value for these files (models, or a folder: `content_digest`), from the disk
    cache when it holds it (see the module doc); `kind` names what is built (part of the entry's
    name); `extra` is everything else the value depends on (its repr is part of the key); `valid`:
    whether a value read back still holds (e.g. the files it names still exist), else rebuilt."""
    try:
        if os.environ.get("TFLITE_INSPECTOR_NO_DISK_CACHE") or sum(_size(p) for p in paths) > MAX_MODEL_BYTES:
            return build()
        key = hashlib.sha256(repr((kind, code_fingerprint(), [content_digest(p) for p in paths], extra)).encode()).hexdigest()
    except OSError:
        return build()  # the caller's own reading reports the file
    entry = folder() / f"{kind}-{key[:40]}.pickle"
    try:
        with open(entry, "rb") as f:
            value: T = pickle.load(f)  # what `build` made, pickled by this function
        if valid is None or valid(value):
            os.utime(entry)  # recently used: kept longer
            return value
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a corrupt or foreign entry is rebuilt (and replaced)
        pass
    value = build()
    _store(entry, value)
    return value


def _store(entry: Path, value: object) -> None:
    from inspector.core.writing import write_cache_file

    try:  # not an output of the command: written now, whatever the command's outcome
        write_cache_file(entry, pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))
        entries = sorted(entry.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
        for old in entries[MAX_ENTRIES:]:
            old.unlink(missing_ok=True)
    except Exception:  # noqa: BLE001 - a cache that cannot be written is only slower
        pass
