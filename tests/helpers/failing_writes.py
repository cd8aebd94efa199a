"""A write that stops part-way: patch `writing.os.fdopen` so the temporary file gets only a
prefix of the data before `error` is raised (a full disk, a killed process)."""

from __future__ import annotations

import os


def fail_mid_write(monkeypatch, writing_module, error: BaseException, keep: float = 0.5) -> None:
    real_fdopen = os.fdopen

    class Partial:
        def __init__(self, f):
            self.f = f

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.f.close()

        def write(self, data):
            self.f.write(data[: int(len(data) * keep)])
            raise error

    monkeypatch.setattr(writing_module.os, "fdopen", lambda fd, mode: Partial(real_fdopen(fd, mode)))


def unwritable_folder(tmp_path):
    """A folder no file can be created in: a read-only tmp folder (chmod 555) for an ordinary
    user; as root, which writes through permissions, /sys (a file system that takes no new files)."""
    import tempfile
    from pathlib import Path

    d = Path(tmp_path) / "read-only"
    d.mkdir(exist_ok=True)
    d.chmod(0o555)
    for folder in (d, Path("/sys")):
        try:
            fd, probe = tempfile.mkstemp(dir=folder)
        except OSError:
            return folder
        os.close(fd)
        os.unlink(probe)
    raise RuntimeError("no unwritable folder on this machine")
