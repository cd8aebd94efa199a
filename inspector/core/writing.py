"""The one helper that writes every output file (docs/ARCHITECTURE.md, "Writing files").

- `-` is standard output.
- A regular file is replaced atomically (temp file in the same folder, fsync, rename) and keeps its
  permissions; a symlink is followed and its target replaced (the link stays).
- Anything else that exists (character device such as /dev/null, FIFO, socket, /dev/stdout or
  /proc/self/fd/N) is opened and written in place, never renamed over.
- A target that is one of the input models (registered with `protect_input`) is refused.
- A command writes all its outputs or none (`outputs`): every destination is checked before any
  work (its folder exists and takes a file, it is not an input, not a folder where a file is
  meant), each write is staged in a temporary file beside its target, and the files take their
  names together when the command succeeds; when it fails, what it staged (and a folder output
  it created) is removed. A missing folder is never created: an output's folder must exist
  (`extract --out DIR` and `convert --out-dir DIR` name a folder themselves: that folder is
  created, inside an existing one).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import shutil
import socket
import stat
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from json.encoder import encode_basestring_ascii
from pathlib import Path
from typing import Any

from inspector.core.errors import InputError, InspectorError, OutputError

_PROTECTED: set[tuple[int, int]] = set()  # (st_dev, st_ino) of the input models of this process
_FD_LINK = re.compile(r"^/(?:proc/self|proc/(\d+)|dev)/fd/(\d+)$")
_STD_LINK = {"/dev/stdout": 1, "/dev/stderr": 2}


def protect_input(*paths: str | os.PathLike[str] | None) -> None:
    """Register input files (models, recipes) that no output may overwrite in this process."""
    for p in paths:
        if p is None:
            continue
        try:
            st = os.stat(p)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            _PROTECTED.add((st.st_dev, st.st_ino))


def refuse_if_input(dest: str | os.PathLike[str] | None, what: str) -> None:
    """Fail before any work is done when `dest` is one of the registered input files."""
    if dest is None or os.fspath(dest) == "-":
        return
    try:
        st = os.stat(dest)
    except OSError:
        return
    if (st.st_dev, st.st_ino) in _PROTECTED:
        raise InputError(f"{what} would overwrite an input file; choose another path", os.fspath(dest))


def clear_protected_inputs() -> None:
    _PROTECTED.clear()


def write_output(dest: str | os.PathLike[str], data: bytes | str) -> None:
    """Write `data` to `dest` following the rules in the module docstring. A failed write
    (no such folder, no permission, full disk) raises `OutputError` naming `dest`; a closed
    pipe stays a BrokenPipeError (the CLI ends quietly on it)."""
    try:
        _write_output(dest, data)
    except (BrokenPipeError, InspectorError):
        raise
    except OSError as e:
        reason = e.strerror or str(e)
        raise OutputError(f"cannot write the output: {reason}", os.fspath(dest)) from e


def _write_output(dest: str | os.PathLike[str], data: bytes | str) -> None:
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    tx = _ACTIVE.get()
    if tx is not None:
        tx.stage(dest, raw)
        return
    if os.fspath(dest) == "-":
        _write_stdout(raw)
        return
    path = os.fspath(dest)
    fd_number = _fd_behind(path)
    if fd_number is not None:  # /dev/stdout, /proc/self/fd/1 or a link to them: the open stream
        _flush_std(fd_number)
        _write_fd(fd_number, raw)
        return
    try:
        st = os.stat(path)  # follows links
    except FileNotFoundError:
        st = None
    if st is not None and (st.st_dev, st.st_ino) in _PROTECTED:
        raise InputError("refusing to overwrite an input model; choose another output path", path)
    if st is not None and stat.S_ISSOCK(st.st_mode):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall(raw)
        return
    if st is not None and not stat.S_ISREG(st.st_mode):
        if stat.S_ISDIR(st.st_mode):
            raise InputError("is a folder, not a file", path)
        fd = os.open(path, os.O_WRONLY)  # device or FIFO: written in place, never replaced
        try:
            _write_fd(fd, raw)
        finally:
            os.close(fd)
        return
    _replace_atomically(Path(os.path.realpath(path)), raw, st)


def _replace_atomically(target: Path, raw: bytes, st: os.stat_result | None) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = _temp_beside(target, raw, st)
    try:
        os.replace(tmp, target)
    except BaseException:
        _unlink(tmp)
        raise


def _temp_beside(target: Path, raw: bytes, st: os.stat_result | None) -> str:
    """A temporary file in `target`'s folder holding `raw`, with the mode `target` will have."""
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        if st is None:
            os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; new files get the usual mode
        else:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))  # an existing file keeps its permissions
            if hasattr(os, "chown") and (st.st_uid, st.st_gid) != (os.getuid(), os.getgid()):
                try:
                    os.chown(tmp, st.st_uid, st.st_gid)
                except OSError:
                    pass  # not allowed (not root): the file becomes ours, as any editor does
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        _unlink(tmp)
        raise
    return tmp


def _unlink(path: str | os.PathLike[str]) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _fd_behind(path: str) -> int | None:
    """The file descriptor of this process that `path` names through its chain of symlinks
    (/dev/stdout, /dev/fd/N, /proc/self/fd/N), or None for an ordinary path."""
    current = os.path.abspath(path)
    for _ in range(40):
        if current in _STD_LINK:
            return _STD_LINK[current]
        m = _FD_LINK.match(current)
        if m and (m.group(1) is None or int(m.group(1)) == os.getpid()):
            return int(m.group(2))
        if not os.path.islink(current):
            return None
        link = os.readlink(current)
        current = os.path.normpath(os.path.join(os.path.dirname(current), link))
    return None


def _write_stdout(raw: bytes) -> None:
    out = sys.stdout
    buffer = getattr(out, "buffer", None)
    if buffer is not None:
        out.flush()
        buffer.write(raw)
        buffer.flush()
    else:  # a text stream without bytes underneath (captured output)
        out.write(raw.decode("utf-8"))
        out.flush()


def _flush_std(fd: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and stream.fileno() == fd:
                stream.flush()
        except (OSError, ValueError, AttributeError):
            continue


def _write_fd(fd: int, raw: bytes) -> None:
    view = memoryview(raw)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    write_output(path, data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    write_output(path, text.encode("utf-8"))


def write_cache_file(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a file the tool keeps for itself (a prepared-model cache entry, a Keras twin cache
    index), not an output of the command: replaced atomically now, outside any output
    transaction (`outputs`). A cache entry is not one of the outputs a command writes all of or
    none of: a command that fails after building it keeps it for the next run, and it is never
    staged for a commit that may not come. Its folder is created."""
    target = Path(os.path.realpath(path))
    try:
        st: os.stat_result | None = os.stat(target)
    except FileNotFoundError:
        st = None
    _replace_atomically(target, bytes(data), st)


def json_float(v: float | None) -> float | None:
    """A float as JSON holds it: infinite or NaN (not representable in JSON) as None."""
    return None if v is None or not math.isfinite(v) else v


def to_json_text(obj: object) -> str:
    """`json.dumps(obj, indent=2, allow_nan=False)` (numpy scalars and arrays as numbers and
    lists), the same text written faster (`dumps_indented`)."""
    return dumps_indented(obj, _default)


# JSON text indented by two spaces, the same characters as `json.dumps(obj, indent=2,
# allow_nan=False, default=default)`, about twice as fast on a comparison's result. Python's C
# encoder does not indent (before 3.14), so `json.dumps(indent=2)` runs the pure-Python encoder:
# on MobileNetV2's result (250,000 numbers, most in per-channel lists) 0.2-0.6 s of every
# `compare --json`. Here a list of plain numbers (and nulls) is written in one `join` (each
# number by `float.__repr__` / `int.__repr__`, as `json` writes it); everything else follows
# `json.encoder`'s rules in the same order (strings through its C escaper, keys converted as it
# converts them, `default` for other objects, out-of-range floats refused).
# tests/core/test_json_text.py compares the text with `json.dumps`.
def dumps_indented(obj: Any, default: Callable[[Any], Any] | None = None) -> str:
    parts: list[str] = []
    _encode(obj, 0, parts, default or _no_default)
    return "".join(parts)


_INDENT = "  "
_NONE = type(None)
_NUMBERS = frozenset({float, int, _NONE})


def _no_default(o: Any) -> Any:
    raise TypeError(f"Object of type {o.__class__.__name__} is not JSON serializable")


def _float(o: float) -> str:
    if math.isfinite(o):
        return float.__repr__(o)
    raise ValueError("Out of range float values are not JSON compliant: " + repr(o))


def _encode(o: Any, level: int, parts: list[str], default: Callable[[Any], Any]) -> None:
    while True:
        if isinstance(o, str):
            parts.append(encode_basestring_ascii(o))
        elif o is None:
            parts.append("null")
        elif o is True:
            parts.append("true")
        elif o is False:
            parts.append("false")
        elif isinstance(o, int):
            parts.append(int.__repr__(o))
        elif isinstance(o, float):
            parts.append(_float(o))
        elif isinstance(o, list | tuple):
            _list(o, level, parts, default)
        elif isinstance(o, dict):
            _dict(o, level, parts, default)
        else:
            o = default(o)
            continue
        return


def _list(o: list[Any] | tuple[Any, ...], level: int, parts: list[str], default: Callable[[Any], Any]) -> None:
    if not o:
        parts.append("[]")
        return
    inner = "\n" + _INDENT * (level + 1)
    close = "\n" + _INDENT * level + "]"
    kinds = set(map(type, o))
    if kinds <= _NUMBERS:  # plain numbers (and nulls): one join
        text = ("," + inner).join(map(repr, o) if _NONE not in kinds else ("null" if v is None else repr(v) for v in o))
        if "n" in text:  # 'inf' or 'nan': refused as json refuses it
            for v in o:
                if type(v) is float:
                    _float(v)
        parts.append("[" + inner + text + close)
        return
    parts.append("[")
    first = True
    for v in o:
        parts.append(inner if first else "," + inner)
        first = False
        _encode(v, level + 1, parts, default)
    parts.append(close)


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, float):
        return _float(k)
    if k is True:
        return "true"
    if k is False:
        return "false"
    if k is None:
        return "null"
    if isinstance(k, int):
        return int.__repr__(k)
    raise TypeError(f"keys must be str, int, float, bool or None, not {k.__class__.__name__}")


def _dict(o: dict[Any, Any], level: int, parts: list[str], default: Callable[[Any], Any]) -> None:
    if not o:
        parts.append("{}")
        return
    inner = "\n" + _INDENT * (level + 1)
    first = True
    parts.append("{")
    for k, v in o.items():
        parts.append((inner if first else "," + inner) + encode_basestring_ascii(_key(k)) + ": ")
        first = False
        _encode(v, level + 1, parts, default)
    parts.append("\n" + _INDENT * level + "}")


def _default(o: object) -> object:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def write_json_output(obj: object, dest: str) -> None:
    """Write JSON to a path (see `write_output`), or to standard output for '-'."""
    write_output(dest, to_json_text(obj) + "\n")


# ---------------------------------------------------------------------- all outputs or none


@dataclass(frozen=True)
class Target:
    """One output a command was asked for: the path, the option that named it (for messages),
    and whether it names a folder the command fills (`extract --out DIR`)."""

    path: str
    flag: str
    folder: bool = False


def check_target(target: Target, made: Sequence[str] = ()) -> None:
    """Raise the one-line error the command would meet writing `target`, before any work: an
    input file, a folder where a file is meant (or the reverse), a missing folder, a folder that
    takes no file (read-only, no permission). '-', /dev/stdout and devices, FIFOs and sockets
    that exist are written in place and pass. `made`: folder outputs of the same command (as
    absolute paths); a file inside one of them is checked as that folder is."""
    path = target.path
    if path == "-" or _fd_behind(path) is not None:
        return
    try:
        st = os.stat(path)
    except OSError:
        st = None
    if st is not None and (st.st_dev, st.st_ino) in _PROTECTED:
        raise InputError(f"refusing to overwrite an input model or file ({target.flag}); choose another output path", path)
    if target.folder:
        if st is not None and not stat.S_ISDIR(st.st_mode):
            raise InputError(f"{target.flag} must be a folder, and this is an existing file", path)
        if st is None and os.path.islink(path):
            raise OutputError("cannot write the output: a link to nothing, not a folder", path)
        folder = Path(path) if st is not None else Path(os.path.abspath(path)).parent
    else:
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError(f"{target.flag} names a folder; give a file path", path)
        if st is not None and not stat.S_ISREG(st.st_mode):
            return  # a device, FIFO or socket: written in place
        folder = Path(os.path.realpath(path)).parent
        if str(folder) in made and not folder.exists():
            return  # `convert --out-dir D --json D/t.json`: D is checked, and made, as the folder output
    _check_folder(folder, path)


def _check_folder(folder: Path, path: str) -> None:
    if not folder.exists():
        raise OutputError(f"cannot write the output: the folder {folder} does not exist; create it first", path)
    if not folder.is_dir():
        raise OutputError(f"cannot write the output: {folder} is not a folder", path)
    try:  # a real file: permissions, read-only mounts and root's rights all answer as they will
        fd, probe = tempfile.mkstemp(prefix=".tflite-inspector-probe.", dir=folder)
    except OSError as e:
        raise OutputError(f"cannot write the output: {e.strerror or e}", path) from None
    os.close(fd)
    _unlink(probe)


@dataclass
class Outputs:
    """The outputs of one command (`outputs`): writes are staged and take their names together."""

    targets: Sequence[Target] = ()
    _staged: dict[str, str] = field(default_factory=dict)  # final path -> temporary file beside it
    _streams: list[tuple[str, bytes]] = field(default_factory=list)  # '-', devices: written at the end
    _created: list[Path] = field(default_factory=list)  # folders this command made
    _staging: list[Path] = field(default_factory=list)  # staging folders (`staging_folder`)

    def check(self) -> None:
        made = self._folder_targets()
        for t in self.targets:
            check_target(t, made)

    def _folder_targets(self) -> list[str]:
        return [os.path.realpath(t.path) for t in self.targets if t.folder]

    def make_folder(self, path: str | os.PathLike[str]) -> Path:
        """Create the folder output `path` (its folder must exist); removed again on failure."""
        p = Path(path)
        if not p.is_dir():
            try:
                p.mkdir()
            except FileExistsError:
                pass
            except OSError as e:
                raise OutputError(f"cannot write the output: {e.strerror or e}", os.fspath(path)) from None
            else:
                self._created.append(p)
        return p

    def staging_folder(self, folder: str | os.PathLike[str]) -> Path:
        """A hidden temporary folder inside the folder output `folder` for files another process
        writes; `adopt_folder` gives them their names at the end."""
        d = self.make_folder(folder)
        try:
            s = Path(tempfile.mkdtemp(prefix=".tflite-inspector-staging.", dir=d))
        except OSError as e:
            raise OutputError(f"cannot write the output: {e.strerror or e}", os.fspath(folder)) from None
        self._staging.append(s)
        return s

    def adopt_folder(self, staging: Path, folder: str | os.PathLike[str]) -> list[str]:
        """Stage every file of `staging` (from `staging_folder`) under its name in `folder`."""
        paths = []
        for f in sorted(staging.iterdir()):
            final = str(Path(folder) / f.name)
            self._drop(final)
            self._staged[final] = str(f)
            paths.append(final)
        return paths

    def stage(self, dest: str | os.PathLike[str], raw: bytes) -> None:
        path = os.fspath(dest)
        if path == "-" or _fd_behind(path) is not None:
            self._streams.append((path, raw))
            return
        try:
            st = os.stat(path)
        except FileNotFoundError:
            st = None
        if st is not None and (st.st_dev, st.st_ino) in _PROTECTED:
            raise InputError("refusing to overwrite an input model; choose another output path", path)
        if st is not None and not stat.S_ISREG(st.st_mode):
            if stat.S_ISDIR(st.st_mode):
                raise InputError("is a folder, not a file", path)
            self._streams.append((path, raw))
            return
        target = Path(os.path.realpath(path))
        if not target.parent.is_dir() and str(target.parent) in self._folder_targets():
            self.make_folder(target.parent)  # a file inside this command's own folder output
        if not target.parent.is_dir():
            raise FileNotFoundError(2, f"the folder {target.parent} does not exist; create it first")
        self._drop(str(target))
        self._staged[str(target)] = _temp_beside(target, raw, st)

    def _drop(self, final: str) -> None:
        old = self._staged.pop(final, None)
        if old is not None and not any(old.startswith(str(s) + os.sep) for s in self._staging):
            _unlink(old)

    def commit(self) -> None:
        """Rename every staged file to its name, then write the streams; on a failure, remove
        what this command created and raise."""
        done: list[str] = []
        try:
            for final, tmp in list(self._staged.items()):
                existed = os.path.lexists(final)
                os.replace(tmp, final)
                del self._staged[final]
                if not existed:
                    done.append(final)
            for s in self._staging:
                shutil.rmtree(s, ignore_errors=True)
            self._staging.clear()
            streams, self._streams = self._streams, []
            for path, raw in streams:
                _write_output(path, raw)
        except BaseException:
            for final in done:
                _unlink(final)
            self.rollback()
            raise

    def rollback(self) -> None:
        for tmp in self._staged.values():
            _unlink(tmp)
        self._staged.clear()
        self._streams.clear()
        for s in self._staging:
            shutil.rmtree(s, ignore_errors=True)
        self._staging.clear()
        for d in reversed(self._created):
            try:
                d.rmdir()  # only when empty: files that were there stay
            except OSError:
                pass
        self._created.clear()


_ACTIVE: contextvars.ContextVar[Outputs | None] = contextvars.ContextVar("inspector_outputs", default=None)


def leave_outputs() -> None:
    """Outside any transaction from now on in this context: a worker process forked from a
    command inherits the command's, which only the command commits, so what the worker writes
    (the Keras twin cache) stayed staged as temporary files and was never written."""
    _ACTIVE.set(None)


def active_outputs() -> Outputs | None:
    """The transaction of the running command, if any."""
    return _ACTIVE.get()


@contextlib.contextmanager
def outputs(targets: Sequence[Target] = ()) -> Iterator[Outputs]:
    """All of a command's outputs or none: `targets` are checked now (`check_target`); inside,
    every `write_output` is staged; they are written when the block ends normally and removed
    when it raises."""
    tx = Outputs(list(targets))
    tx.check()
    token = _ACTIVE.set(tx)
    active = True
    try:
        yield tx
    except BaseException:
        tx.rollback()
        raise
    else:
        _ACTIVE.reset(token)
        active = False
        try:
            tx.commit()
        except (BrokenPipeError, InspectorError):
            raise
        except OSError as e:
            raise OutputError(f"cannot write the output: {e.strerror or e}", getattr(e, "filename", None)) from e
    finally:
        if active:
            _ACTIVE.reset(token)


def make_output_folder(path: str | os.PathLike[str]) -> Path:
    """Create a folder output (`extract --out DIR`): inside a command, recorded so that a failure
    removes it again; its own folder must exist."""
    tx = _ACTIVE.get()
    if tx is not None:
        return tx.make_folder(path)
    p = Path(path)
    p.mkdir(exist_ok=True)
    return p
