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


def keras_built_folder(root: Path, prefix: str, module: str, builder_file: str) -> Path:
    """`root/<prefix>_<key>`: a folder of Keras models that `python -m <module> FOLDER` builds in
    a subprocess (tf-keras needs TF_USE_LEGACY_KERAS=1 before TensorFlow's import), once, renamed
    into place when complete ("build_seconds.txt" marks it); `key` hashes `builder_file`, so a
    changed builder builds anew."""
    import hashlib
    import shutil
    import subprocess

    key = hashlib.sha256(Path(builder_file).read_bytes()).hexdigest()[:10]
    final = root / f"{prefix}_{key}"
    if (final / "build_seconds.txt").exists():
        return final
    tmp = root / f"{prefix}_{key}.{os.getpid()}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    env = {**os.environ, "TF_USE_LEGACY_KERAS": "1", "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, "-m", module, str(tmp)], check=True, env=env, stdout=sys.stderr,
                   cwd=Path(__file__).resolve().parents[2])
    try:
        os.rename(tmp, final)
    except OSError:  # another process built it first
        shutil.rmtree(tmp, ignore_errors=True)
    return final
