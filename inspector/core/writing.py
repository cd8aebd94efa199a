"""The one helper that writes every output file (docs/ARCHITECTURE.md, "Writing files").

- `-` is standard output.
- A regular file is replaced atomically (temp file in the same folder, fsync, rename) and keeps its
  permissions; a symlink is followed and its target replaced (the link stays).
- Anything else that exists (character device such as /dev/null, FIFO, socket, /dev/stdout or
  /proc/self/fd/N) is opened and written in place, never renamed over.
- A target that is one of the input models (registered with `protect_input`) is refused.
"""

from __future__ import annotations

import json
import math
import os
import re
import socket
import stat
import sys
import tempfile
from pathlib import Path

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
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


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


def json_float(v: float | None) -> float | None:
    """A float as JSON holds it: infinite or NaN (not representable in JSON) as None."""
    return None if v is None or not math.isfinite(v) else v


def to_json_text(obj: object) -> str:
    return json.dumps(obj, indent=2, allow_nan=False, default=_default)


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
