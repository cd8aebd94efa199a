"""Build the PyInstaller bundle and run the frozen self-test offscreen.

Slow (about 3 minutes: a clean venv without TensorFlow, then PyInstaller). It runs in CI
(CI=true) and when RUN_SLOW=1; `make test` on a developer machine skips it otherwise.
"""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = os.environ.get("CI") == "true" or os.environ.get("RUN_SLOW") == "1"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not RUN, reason="slow: set RUN_SLOW=1 (CI runs it)")]


@pytest.fixture(scope="module")
def bundle() -> Path:
    r = subprocess.run(["bash", "packaging/build.sh"], cwd=REPO, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    exe = REPO / "dist" / "tflite-inspector" / "tflite-inspector"
    assert exe.exists()
    return exe


def _run(exe: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=300, env=env)


def test_frozen_version(bundle):
    from inspector import __version__

    r = _run(bundle, "--version")
    assert r.returncode == 0 and r.stdout.strip() == f"tflite-inspector {__version__}"


def test_frozen_self_test(bundle):
    r = _run(bundle, "--self-test")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failed" in r.stdout and "FAIL" not in r.stdout


def test_bundle_has_no_tensorflow_and_fits_budget(bundle):
    root = bundle.parent
    assert not list(root.glob("_internal/tensorflow*")), "TensorFlow must not be bundled"
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file() and not p.is_symlink())  # links count once
    assert size < 400 * 2**20, f"bundle is {size / 2**20:.0f} MiB, budget 400 MiB"
    tarballs = list((REPO / "dist").glob("tflite-inspector-*-linux-*.tar.gz"))
    assert tarballs
    with tarfile.open(tarballs[0]) as tf:
        names = tf.getnames()
    assert "tflite-inspector/tflite-inspector" in names and "tflite-inspector/tflite-inspector.desktop" in names


def test_frozen_info_bad_input(bundle, tmp_path):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a model at all")
    r = _run(bundle, "info", str(bad))
    assert r.returncode == 2 and str(bad) in r.stderr and "Traceback" not in r.stderr
