"""What running the interpreter in a worker process costs.

    .venv/bin/python tests/perf/bench_isolation.py [--samples 32]

Prints:
- worker start cost (first call on a new worker): forkserver (first ever, which also starts the
  fork server; then later ones) and spawn,
- round-trip cost of a call and of arrays of 1, 16 and 128 MB over the pipe (pickle),
- the comparison benchmark (`compare_models` on the MobileNetV2-sized pair of bench_compare.py,
  same inputs) in-process vs `compare_in_worker` (fresh worker = cold; reused worker = warm),
  with the size of the pickled result and the peak RSS of the calling process.
The machine is shared: timings are noisy, run it twice before believing a ratio.
"""

from __future__ import annotations

import argparse
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
sys.path[:0] = [str(REPO), str(Path(__file__).resolve().parent)]  # tests.helpers, bench_models

import numpy as np  # noqa: E402


def _first_call(context: str) -> float:
    from inspector.core.runtime.worker import WorkerProcess
    from tests.helpers import isolation_helpers as h

    w = WorkerProcess(context)
    t = time.perf_counter()
    w.run(h.echo, 1)
    dt = time.perf_counter() - t
    w.close()
    return dt


def _hwm_mb() -> float:
    """Peak RSS of this process image (VmHWM; ru_maxrss would include the parent's, kept across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _median(xs: list[float]) -> float:
    return sorted(xs)[len(xs) // 2]


def compare_benchmark(fpath: str, qpath: str, npz: str, n: int) -> None:
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.compare.in_worker import compare_in_worker
    from inspector.core.runtime.worker import WorkerProcess
    from inspector.core.samples.settings import SampleSettings

    opts = CompareOptions(samples=SampleSettings(count=n, source=str(npz)))
    print(f"\ncomparison benchmark: MobileNetV2 224x224 pair, {n} samples, optimized runtime")
    from tests.helpers import isolation_helpers as h

    rss0 = _hwm_mb()
    t = time.perf_counter()
    first = WorkerProcess()  # the app does this at start: the fork server preloads LiteRT and compare
    first.run(h.echo, 0)
    first.close()
    print(f"  first worker of the process (starts the fork server, preloads): {time.perf_counter() - t:.2f} s")
    w = WorkerProcess()
    t = time.perf_counter()
    iso_cold = compare_in_worker(fpath, qpath, opts, worker=w)
    cold_iso = time.perf_counter() - t
    warm_iso = []
    for _ in range(2):
        t = time.perf_counter()
        iso = compare_in_worker(fpath, qpath, opts, worker=w)
        warm_iso.append(time.perf_counter() - t)
    w.close()
    rss_iso = _hwm_mb()
    t = time.perf_counter()
    compare_models(fpath, qpath, opts)
    cold_in = time.perf_counter() - t
    warm_in = []
    for _ in range(2):
        t = time.perf_counter()
        ref = compare_models(fpath, qpath, opts)
        warm_in.append(time.perf_counter() - t)
    rss_in = _hwm_mb()
    assert [x.metrics.mse for x in iso.layers] == [x.metrics.mse for x in ref.layers]
    assert [x.metrics.mse for x in iso_cold.layers] == [x.metrics.mse for x in ref.layers]
    size = len(pickle.dumps(iso, protocol=pickle.HIGHEST_PROTOCOL))
    wi, wn = min(warm_iso), min(warm_in)
    print(f"  in-process:  cold {cold_in:6.2f} s   warm {wn:6.2f} s  ({1e3 * wn / n:.1f} ms/sample)")
    print(f"  isolated:    cold {cold_iso:6.2f} s   warm {wi:6.2f} s  ({1e3 * wi / n:.1f} ms/sample)")
    print(f"  overhead:    cold {cold_iso - cold_in:+6.2f} s ({100 * (cold_iso / cold_in - 1):+.1f}%)   "
          f"warm {wi - wn:+6.2f} s ({100 * (wi / wn - 1):+.1f}%)")
    print(f"  result: {len(iso.layers)} layers, pickled {size / 1e3:.0f} kB")
    print(f"  peak RSS of the calling process: {rss0:.0f} MB before, {rss_iso:.0f} MB after the isolated runs, "
          f"{rss_in:.0f} MB after the in-process runs")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--compare", nargs=4, metavar=("FLOAT", "QUANT", "NPZ", "N"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.compare:
        f, q, npz, n = args.compare
        compare_benchmark(f, q, npz, int(n))
        return 0
    from inspector.core.runtime.worker import WorkerProcess
    from tests.helpers import isolation_helpers as h

    print("worker start (first call on a new worker):")
    print(f"  forkserver, first ever (starts the fork server): {_first_call('forkserver') * 1e3:7.1f} ms")
    print(f"  forkserver, later workers:                       {_median([_first_call('forkserver') for _ in range(5)]) * 1e3:7.1f} ms")
    print(f"  spawn:                                           {_median([_first_call('spawn') for _ in range(3)]) * 1e3:7.1f} ms")

    w = WorkerProcess()
    w.run(h.echo, 0)
    t = time.perf_counter()
    for _ in range(200):
        w.run(h.echo, 0)
    print(f"round trip of an empty call: {(time.perf_counter() - t) / 200 * 1e6:.0f} us")
    for mb in (1, 16, 128):
        a = np.ones(mb << 18, np.float32)  # mb MiB
        w.run(h.echo, a[:10])
        times = []
        for _ in range(3):
            t = time.perf_counter()
            back = w.run(h.echo, a)
            times.append(time.perf_counter() - t)
        assert back.nbytes == a.nbytes
        dt = _median(times)
        print(f"  {mb:4d} MiB array there and back: {dt * 1e3:7.1f} ms ({2 * a.nbytes / dt / 1e9:.2f} GB/s)")
    w.close()

    from bench_models import cache_dir, images, mobilenet_pair

    fpath, qpath = mobilenet_pair()
    n = args.samples
    npz = cache_dir() / f"bench_inputs_{n}.npz"
    if not npz.exists():
        np.savez(npz, input=images(n, seed=3))
    # In a fresh process without TensorFlow (imported above to locate the models), for a clean RSS.
    sys.stdout.flush()
    subprocess.run([sys.executable, __file__, "--compare", str(fpath), str(qpath), str(npz), str(n)], check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
