"""Where the time to the first figure goes for a Keras model (issue 29 §5): `info MODEL --verbose`
as a user runs it, each step's cost from its own step lines (loading TensorFlow, loading the
model, converting the float and int8 twins, reading the QAT ranges), first with an empty twin
cache, then again (the twins and info come from the cache: no TensorFlow), and `compare MODEL
B.tflite` (it always needs TensorFlow: the Keras model runs).

    .venv/bin/python tests/perf/bench_keras_steps.py [--model M.h5 --tflite B.tflite --inputs X.npz]

Defaults to the cached QAT MLP fixture (tests/helpers/keras_fixtures.py). Wall-clock on a shared
machine: run it twice.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def steps_of(stderr: str, command: str) -> list[tuple[float, str]]:
    """(seconds since the start, step) for each `--verbose` line of `command`."""
    out = []
    for line in stderr.splitlines():
        head = f"tflite-inspector {command}: "
        if line.startswith(head) and " s  " in line:
            t, step = line[len(head):].split(" s  ", 1)
            out.append((float(t), step))
    return out


def run(argv: list[str], cache: str) -> tuple[float, list[tuple[float, str]], str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": cache}
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "inspector", *argv, "--verbose"], capture_output=True, text=True, env=env, cwd=REPO)
    wall = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return wall, steps_of(r.stderr, argv[0]), r.stderr


def show(title: str, wall: float, steps: list[tuple[float, str]]) -> None:
    print(f"{title}: {wall:.1f} s wall")
    for (t, step), nxt in zip(steps, [*steps[1:], (None, None)], strict=True):
        cost = (nxt[0] if nxt[0] is not None else wall) - t
        print(f"  {t:6.1f} s  +{cost:5.1f} s  {step}")
    if steps:
        print(f"  {steps[0][0]:6.1f} s before the first step (Python, the CLI, the worker process)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model")
    ap.add_argument("--tflite")
    ap.add_argument("--inputs")
    a = ap.parse_args()
    if a.model is None:
        from tests.helpers.keras_fixtures import keras_fixture_dir

        root = keras_fixture_dir(REPO / ".fixture-cache")
        a.model, a.tflite, a.inputs = str(root / "mlp_qat.h5"), str(root / "mlp_qat_int8.tflite"), str(root / "mlp_inputs.npz")
    with tempfile.TemporaryDirectory() as cache:
        wall, steps, _ = run(["info", a.model], cache)
        show(f"info {Path(a.model).name}, empty twin cache", wall, steps)
        wall2, steps2, _ = run(["info", a.model], cache)
        show(f"info {Path(a.model).name}, twins cached", wall2, steps2)
        print(f"info: {wall:.1f} s -> {wall2:.1f} s with the twin cache")
        if a.tflite:
            argv = ["compare", a.model, a.tflite] + (["--inputs", a.inputs] if a.inputs else [])
            wall3, steps3, _ = run(argv, cache)
            show(f"compare {Path(a.model).name} {Path(a.tflite).name}", wall3, steps3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
