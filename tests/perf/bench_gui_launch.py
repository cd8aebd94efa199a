"""GUI: launch to the example's first figure (issue 36's row; target <= 5 s).

    .venv/bin/python tests/perf/bench_gui_launch.py [--runs 5] [--repo CHECKOUT]

A whole process, `python -m inspector gui example_float.tflite example_int8.tflite` (offscreen
platform), from exec to the first comparison figure painted: the example pair opens compared (its
bundled inputs, each layer's own error included) and the app writes the time it painted the
layer-error plot with the result into the file TFLITE_INSPECTOR_FIRST_FIGURE names
(`inspector/gui/first_figure.py`). Median of `--runs` runs, after one run that fills the cache
folder (the statistics kernel, the prepared models: what a user's second launch finds); each run
with its own fresh settings (no session to recover). CPU seconds of the whole process tree (the
app, its worker and the fork server) until the figure, too. The app is closed with SIGTERM (its
normal close). `--repo`: time another checkout's code (its app must write the marker), e.g. a
before / after comparison.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(HERE)]

from bench_limit import _tree  # noqa: E402

EXAMPLES = REPO / "inspector" / "resources" / "examples"
TARGET_S = 5.0


def launch(cache: Path, repo: Path = REPO, timeout: float = 120.0) -> tuple[float, float]:
    """(seconds from exec to the first figure, CPU seconds of the process tree by then) of the
    app of the checkout `repo`."""
    with tempfile.TemporaryDirectory() as d:
        marker = Path(d) / "first-figure"
        env = dict(os.environ, PYTHONPATH=str(repo), QT_QPA_PLATFORM="offscreen", TFLITE_INSPECTOR_FIRST_FIGURE=str(marker),
                   XDG_CACHE_HOME=str(cache), XDG_CONFIG_HOME=f"{d}/config", XDG_DATA_HOME=f"{d}/data",
                   XDG_STATE_HOME=f"{d}/state")  # fmt: skip
        env.pop("TFLITE_INSPECTOR_NO_DISK_CACHE", None)
        argv = [sys.executable, "-m", "inspector", "gui", str(EXAMPLES / "example_float.tflite"), str(EXAMPLES / "example_int8.tflite")]
        t0 = time.time()
        proc = subprocess.Popen(argv, env=env, cwd=repo, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        cpu: dict[int, float] = {}
        try:
            while not marker.exists():
                if proc.poll() is not None:
                    raise RuntimeError(f"the app ended (exit {proc.returncode}) before its first figure:\n{proc.stderr.read().decode()[-3000:]}")  # type: ignore[union-attr]
                if time.time() - t0 > timeout:
                    raise RuntimeError(f"no figure within {timeout:g} s")
                for pid, (c, _m) in _tree(proc.pid).items():
                    cpu[pid] = c
                time.sleep(0.01)
            for pid, (c, _m) in _tree(proc.pid).items():
                cpu[pid] = c
            drawn = float(marker.read_text()) - t0
        finally:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    return drawn, sum(cpu.values())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose app is timed (default: this one)")
    args = ap.parse_args(argv)
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start", flush=True)
    with tempfile.TemporaryDirectory() as cache:
        launch(Path(cache), args.repo)  # fills the cache folder, as a first launch does
        got = []
        for k in range(args.runs):
            got.append(launch(Path(cache), args.repo))
            print(f"  run {k + 1}: first figure {got[-1][0]:.2f} s after exec (CPU {got[-1][1]:.2f} s)", flush=True)
    wall = statistics.median(g[0] for g in got)
    cpu = statistics.median(g[1] for g in got)
    print(f"  GUI: launch to the example's first figure (median of {args.runs})".ljust(67) + f"{wall:.2f} s (CPU {cpu:.2f} s)".ljust(35) + f"<= {TARGET_S:g} s")
    return 0 if wall <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
