"""The one way test fixtures are built into `.fixture-cache/`: once, atomically, quietly.

The TF converter and Keras print to standard output while building ("Saved artifact at ...");
a fixture first built inside a test that reads its captured stdout (a CLI's `--json -`) would
then see that chatter. So builders run with stdout sent to stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path


def _quietly(build: Callable[[], object]) -> object:
    with contextlib.redirect_stdout(sys.stderr):
        return build()


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def cached_model(path: Path, build: Callable[[], bytes]) -> Path:
    """`path`, built by `build()` the first time."""
    if not path.exists():
        _write(path, _quietly(build))  # type: ignore[arg-type]
    return path


def cached_models(paths: dict[str, Path], build: Callable[[], dict[str, bytes]]) -> dict[str, Path]:
    """`paths`, all built by one `build()` (models trained together) when any is missing."""
    if not all(p.exists() for p in paths.values()):
        for name, data in _quietly(build).items():  # type: ignore[union-attr]
            _write(paths[name], data)
    return paths
