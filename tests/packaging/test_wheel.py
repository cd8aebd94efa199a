"""A wheel built from the checkout's tracked files (what a fresh clone holds), installed into a
clean venv, passes `tflite-inspector --self-test`: the bundled resources ship inside the package.

Slow (a wheel build in an isolated environment, a venv, the self-test); runs in CI (CI=true) and
with RUN_SLOW=1. The venv reuses the dependencies of the running interpreter's environment
through a path file (which does not activate editable installs there), so `inspector` itself can
only come from the wheel.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
RUN = os.environ.get("CI") == "true" or os.environ.get("RUN_SLOW") == "1"

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not RUN, reason="slow: set RUN_SLOW=1 (CI runs it)")]


def _tracked_copy(dest: Path) -> Path:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, files.decode().split("\0")):
        src = REPO / name
        if src.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)
    return dest


def test_wheel_install_passes_self_test(tmp_path):
    src = _tracked_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(wheels), str(src)],
                       capture_output=True, text=True, timeout=900)  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    (wheel,) = wheels.glob("tflite_inspector-*.whl")

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py = venv / "bin" / "python"
    site = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "zz_dependencies.pth").write_text("\n".join(sorted(deps)) + "\n")
    r = subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)],
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["QT_QPA_PLATFORM"] = "offscreen"
    where = subprocess.run([str(py), "-c", "import inspector, inspector.paths as p; print(inspector.__file__); "
                            "print(p.example_inputs())"], cwd=tmp_path, env=env, capture_output=True, text=True)  # fmt: skip
    assert where.returncode == 0, where.stderr
    module, npz = where.stdout.split()
    assert Path(module).is_relative_to(venv) and Path(npz).is_relative_to(venv), where.stdout
    r = subprocess.run([str(venv / "bin" / "tflite-inspector"), "--self-test"], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout and "0 failed" in r.stdout, r.stdout


def test_wheel_build_is_quiet_and_carries_the_resources(tmp_path):
    """`pip install .` showed ~80 lines of setuptools warnings ("Package
    'inspector.resources.examples' is absent from the `packages` configuration", and the
    MANIFEST's exclusions that match nothing in a clean clone); the wheel still carries the
    example pair, its inputs and the icons."""
    import zipfile

    src = _tracked_copy(tmp_path / "src")
    wheels = tmp_path / "wheels"
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", str(wheels), str(src)],
                       capture_output=True, text=True, timeout=900)  # fmt: skip
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    log = r.stdout + r.stderr
    assert "absent from the `packages` configuration" not in log
    assert "no previously-included files" not in log
    (wheel,) = wheels.glob("tflite_inspector-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = subprocess.run(["git", "ls-files", "inspector/resources"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()  # fmt: skip
    data = [n for n in tracked if n.endswith((".tflite", ".npz", ".png", ".ico"))]
    assert len(data) >= 6 and set(data) <= names, sorted(set(data) - names)
