"""How close a comparison is to the physical limit (issue 36): every row of its table in one run.

    .venv/bin/python tests/perf/bench_limit.py [--samples 512] [--rounds 1] [--alt-samples 32]
                                               [--skip-alternatives] [--skip-keras]
                                               [--skip-transformer] [--skip-gui] [--no-compile]

All timings are whole processes (`python -m inspector compare ...`, start to exit, the worker
included) unless a row says otherwise; the baseline is plain LiteRT inference of both models over
the same samples, each model its own interpreter on its own thread (one LiteRT thread, and two:
the faster of the two is the baseline), outputs read. Rows:
- MobileNetV2 160x160 (random weights, int8 with float I/O), `--samples` samples: `compare
  --no-isolated` and `compare` (own error, the default) against plain inference, and the own
  error's cost (`compare` / `compare --no-isolated`); CPU seconds of the whole process tree too
  (less sensitive to other load than wall time);
- the fixed cost of a command: `compare` on 8 samples, wall minus compute (compute = 8 x the
  per-sample cost measured between the 8- and the `--samples`-sample runs);
- memory: the worker's peak RSS comparing 32 and `--samples` samples (flat: sums, not tensors);
- a generated 1,458-op transformer (32 blocks, int8; tests/helpers/graph_fixtures.py) the same way;
- the Keras route: `compare cnn_qat.h5 cnn_qat_int8.tflite` (QAT CNN fixture) with its TFLite twins
  cached, once computed (TensorFlow imported) and once repeated (the result read back);
- TensorFlow's QuantizationDebugger.run() and litert-quantizer's validate() on the MobileNetV2
  pair (`--alt-samples` samples, scaled: they are slow);
- the GUI: `python -m inspector gui` on the example pair (offscreen), exec to its first comparison
  figure painted, median of `--gui-runs` launches (bench_gui_launch.py).
The machine may be shared: with `--rounds N` every round prints its ratios and the table takes
the medians. The package's bytecode is compiled first (`compileall`), as an installed package's is:
where PYTHONDONTWRITEBYTECODE is set, a source checkout otherwise compiles every module it imports
on every command (0.1-0.2 s of a compare's fixed cost; `--no-compile` measures that). Models
are built once and cached in .fixture-cache (bench_cli.pair, graph_fixtures).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO), str(HERE)]

import numpy as np  # noqa: E402
from bench_cli import litert_validate, pair, quantization_debugger  # noqa: E402

PY = sys.executable


def plain(fpath: Path, qpath: Path, data: np.ndarray, lite_threads: int) -> tuple[float, float]:
    """(wall, CPU s): both models over `data`, each its own interpreter (`lite_threads` LiteRT
    threads) on its own Python thread, outputs read."""
    from ai_edge_litert.interpreter import Interpreter

    its = []
    for p in (fpath, qpath):
        it = Interpreter(model_path=str(p), num_threads=lite_threads)
        it.allocate_tensors()
        inp = it.get_input_details()[0]
        it.set_tensor(inp["index"], data[0].astype(inp["dtype"]))
        it.invoke()
        its.append(it)

    def run(it) -> None:
        inp, out = it.get_input_details()[0], it.get_output_details()[0]
        for x in data:
            it.set_tensor(inp["index"], x.astype(inp["dtype"]))
            it.invoke()
            it.get_tensor(out["index"])

    t, c = time.perf_counter(), time.process_time()
    ths = [threading.Thread(target=run, args=(it,)) for it in its]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return time.perf_counter() - t, time.process_time() - c


def baseline(fpath: Path, qpath: Path, data: np.ndarray) -> tuple[float, float]:
    """The faster plain inference (wall, CPU s): one or two LiteRT threads per model."""
    return min(plain(fpath, qpath, data, 1), plain(fpath, qpath, data, 2))


def whole(argv: list[str], env: dict | None = None) -> dict:
    """`python -m inspector *argv`, start to exit: wall, CPU seconds of the process tree and the
    largest peak RSS (VmHWM) among its processes (the worker's), read from /proc every 20 ms."""
    e = dict(os.environ, PYTHONPATH=str(REPO), **(env or {}))
    t = time.perf_counter()
    proc = subprocess.Popen([PY, "-m", "inspector", *argv], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
    cpu: dict[int, float] = {}
    hwm: dict[int, int] = {}
    while proc.poll() is None:
        for pid, (c, m) in _tree(proc.pid).items():
            cpu[pid], hwm[pid] = c, max(m, hwm.get(pid, 0))
        time.sleep(0.02)
    wall = time.perf_counter() - t
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"{argv}: exit {proc.returncode}\n{err}")
    return {"wall": wall, "cpu": sum(cpu.values()) if cpu else math.nan, "peak_mb": max(hwm.values(), default=0) / 1024}


def _tree(root: int) -> dict[int, tuple[float, int]]:
    """{pid: (user + system CPU s, VmHWM kB)} of `root` and its descendants (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK")
    info: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        info[int(d.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / tick)
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in info:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                hwm = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM")))
            except (OSError, StopIteration):
                hwm = 0
            out[pid] = (info[pid][1], hwm)
            todo += [c for c, (pp, _) in info.items() if pp == pid]
    return out


def rows_of_pair(label: str, fpath: Path, qpath: Path, n: int, rounds: int, data: np.ndarray) -> dict:
    """Plain, compare --no-isolated, compare --no-blame and compare (own error and blame, the
    default), `rounds` times interleaved; the medians."""
    base = ["compare", str(fpath), str(qpath), "--samples", str(n), "--json", os.devnull]
    whole(base[:4] + ["2", "--json", os.devnull])  # the statistics kernel and the prepared models, once
    got = []
    for k in range(rounds):
        p, pc = baseline(fpath, qpath, data)
        a = whole(base + ["--no-isolated"])
        i = whole(base + ["--no-blame"])
        b = whole(base)
        got.append((p, pc, a, i, b))
        print(f"  {label} round {k + 1}: plain {p:6.2f} s | --no-isolated {a['wall']:6.2f} s = {a['wall'] / p:4.2f}x | "
              f"compare {i['wall']:6.2f} s = {i['wall'] / p:4.2f}x | own error {i['wall'] / a['wall']:4.2f}x | CPU s: plain "
              f"{pc:5.2f}, --no-isolated {a['cpu']:5.2f}, compare {i['cpu']:5.2f} | with blame {b['wall']:6.2f} s = "
              f"{b['wall'] / i['wall']:4.2f}x (CPU {b['cpu'] / i['cpu']:4.2f}x)", flush=True)  # fmt: skip
    med = statistics.median
    return {
        "plain": med(g[0] for g in got), "plain_cpu": med(g[1] for g in got),
        "noiso": med(g[2]["wall"] for g in got), "iso": med(g[3]["wall"] for g in got),
        "noiso_x": med(g[2]["wall"] / g[0] for g in got), "iso_x": med(g[3]["wall"] / g[0] for g in got),
        "own_x": med(g[3]["wall"] / g[2]["wall"] for g in got),
        "noiso_cpu_x": med(g[2]["cpu"] / g[1] for g in got), "iso_cpu_x": med(g[3]["cpu"] / g[1] for g in got),
        "peak_mb": max(g[3]["peak_mb"] for g in got),
        "blame": med(g[4]["wall"] for g in got), "blame_x": med(g[4]["wall"] / g[3]["wall"] for g in got),
        "blame_cpu_x": med(g[4]["cpu"] / g[3]["cpu"] for g in got),
    }  # fmt: skip


def fixed_cost(fpath: Path, qpath: Path, n: int, per_n_wall: float, repeat: int = 3) -> tuple[float, float, float]:
    """(wall of `compare --no-blame` on 8 samples (best of `repeat`), its compute, wall minus compute):
    compute = 8 x (wall(n) - wall(8)) / (n - 8)."""
    argv = ["compare", str(fpath), str(qpath), "--samples", "8", "--json", os.devnull, "--no-blame"]  # as `per_n_wall`
    w8 = min(whole(argv)["wall"] for _ in range(repeat))
    compute = 8 * max(per_n_wall - w8, 0.0) / (n - 8)
    return w8, compute, w8 - compute


def keras_rows() -> tuple[float, float] | None:
    """(`compare cnn_qat.h5 cnn_qat_int8.tflite` computed with the twins cached, and repeated)."""
    from tests.helpers.keras_fixtures import keras_fixture_dir

    root = keras_fixture_dir(REPO / ".fixture-cache")
    argv = ["compare", str(root / "cnn_qat.h5"), str(root / "cnn_qat_int8.tflite"), "--inputs", str(root / "cnn_inputs.npz"),
            "--json", os.devnull]  # fmt: skip
    whole(argv)  # twins (and the result) cached
    computed = whole(argv, {"TFLITE_INSPECTOR_NO_DISK_CACHE": "1"})["wall"]  # TensorFlow imported, every layer run
    repeated = min(whole(argv)["wall"] for _ in range(2))
    return computed, repeated


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--alt-samples", type=int, default=32)
    ap.add_argument("--skip-alternatives", action="store_true")
    ap.add_argument("--skip-keras", action="store_true")
    ap.add_argument("--skip-transformer", action="store_true", help="no 1,458-op transformer rows")
    ap.add_argument("--skip-gui", action="store_true", help="no GUI launch row")
    ap.add_argument("--no-compile", action="store_true", help="do not compile the package's bytecode first")
    ap.add_argument("--gui-runs", type=int, default=5, help="launches of the GUI on the example (the median is the row)")
    args = ap.parse_args(argv)
    n = args.samples
    from bench_cli import SHAPE

    from tests.helpers.graph_fixtures import SEQ, VOCAB, deep_transformer

    if not args.no_compile:
        import compileall

        compileall.compile_dir(str(REPO / "inspector"), quiet=1)
    fpath, qpath = pair()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at start; {n} samples; whole processes", flush=True)
    img = np.random.default_rng(0).uniform(-1, 1, (n, 1, *SHAPE)).astype(np.float32)
    mnv2 = rows_of_pair("MobileNetV2 160", fpath, qpath, n, args.rounds, img)
    w8, compute8, fixed = fixed_cost(fpath, qpath, n, mnv2["iso"])
    blame8 = min(whole(["compare", str(fpath), str(qpath), "--samples", "8", "--json", os.devnull])["wall"] for _ in range(3)) - w8
    small = whole(["compare", str(fpath), str(qpath), "--samples", "32", "--json", os.devnull])["peak_mb"]
    big = None
    if not args.skip_transformer:
        tf_, tq = (deep_transformer(REPO / ".fixture-cache", 32, m) for m in ("float", "int8"))
        tokens = np.random.default_rng(0).integers(0, VOCAB, (n, 1, SEQ)).astype(np.int32)
        big = rows_of_pair("1,458-op transformer", tf_, tq, n, args.rounds, tokens)
        big_w8, big_c8, big_fixed = fixed_cost(tf_, tq, n, big["iso"], repeat=1)
    keras = None if args.skip_keras else keras_rows()
    qd = val = None
    if not args.skip_alternatives:
        m = args.alt_samples
        qd, val = quantization_debugger(m) * n / m, litert_validate(fpath, qpath, m) * n / m

    def row(label: str, value: str, target: str) -> None:
        print(f"  {label:<64} {value:<34} {target}")

    print(f"\n  run (median of {args.rounds} round(s))".ljust(67) + "measured".ljust(35) + "target")
    row(f"plain inference, both models, MobileNetV2 160 x {n}", f"{mnv2['plain']:.2f} s", "")
    row("compare --no-isolated / plain", f"{mnv2['noiso']:.2f} s = {mnv2['noiso_x']:.2f}x (CPU {mnv2['noiso_cpu_x']:.2f}x)", "<= 1.6x")
    row("compare --no-blame (own error included) / plain", f"{mnv2['iso']:.2f} s = {mnv2['iso_x']:.2f}x (CPU {mnv2['iso_cpu_x']:.2f}x)", "<= 2.5x")
    row("own error / accumulated only (compare --no-blame / --no-isolated)", f"{mnv2['own_x']:.2f}x", "<= 1.4x")
    row("compare (the default: blame measured) / compare --no-blame", f"{mnv2['blame']:.2f} s = {mnv2['blame_x']:.2f}x "
        f"(CPU {mnv2['blame_cpu_x']:.2f}x)", "<= 1.5x")  # fmt: skip
    row("fixed cost of a command (compare on 8 samples, wall - compute)", f"{fixed:.2f} s (wall {w8:.2f} s, compute {compute8:.2f} s)", "<= 0.6 s")
    row("  blame on those 8 samples (the default) adds", f"{blame8:.2f} s (7 edited models built and run)", "")
    if keras is not None:
        row("Keras compare cnn_qat.h5 cnn_qat_int8.tflite, twins cached", f"{keras[0]:.2f} s computed, {keras[1]:.2f} s repeated", "<= 5 s unchanged")
    row(f"memory: worker peak RSS, 32 -> {n} samples", f"{small:.0f} -> {mnv2['peak_mb']:.0f} MB", "flat")
    if big is not None:
        row(f"1,458-op transformer: plain inference x {n}", f"{big['plain']:.2f} s", "")
        row("1,458-op transformer: compare --no-isolated / plain", f"{big['noiso']:.2f} s = {big['noiso_x']:.2f}x (CPU {big['noiso_cpu_x']:.2f}x)", "")
        row("1,458-op transformer: compare / plain", f"{big['iso']:.2f} s = {big['iso_x']:.2f}x (CPU {big['iso_cpu_x']:.2f}x)", "")
        per = 1000 * (big["iso"] - big_w8) / (n - 8)
        row("1,458-op transformer: compare per sample / plain per sample", f"{per:.2f} ms / {1000 * big['plain'] / n:.2f} ms", "")
        row("1,458-op transformer: fixed cost (8 samples, wall - compute)", f"{big_fixed:.2f} s (wall {big_w8:.2f} s)", "")
    if qd is not None:
        m = args.alt_samples
        row(f"QuantizationDebugger.run() ({m} samples scaled to {n}; in process)", f"{qd:.2f} s = {qd / mnv2['plain']:.1f}x plain",
            f"ours {qd / mnv2['iso']:.1f}x faster")  # fmt: skip
        row(f"litert-quantizer validate() ({m} samples scaled to {n}; in process)", f"{val:.2f} s = {val / mnv2['plain']:.1f}x plain",
            f"ours {val / mnv2['iso']:.1f}x faster")  # fmt: skip
    if not args.skip_gui:
        gui = gui_row(args.gui_runs)
        row(f"GUI: launch to the example's first figure (median of {args.gui_runs})", f"{gui[0]:.2f} s (CPU {gui[1]:.2f} s)", "<= 5 s")
    return 0


def gui_row(runs: int) -> tuple[float, float]:
    """(median seconds from exec to the example's first figure, median CPU s): bench_gui_launch."""
    import tempfile

    from bench_gui_launch import launch

    with tempfile.TemporaryDirectory() as cache:
        launch(Path(cache))  # the cache folder filled, as a first launch does
        got = [launch(Path(cache)) for _ in range(runs)]
    return statistics.median(g[0] for g in got), statistics.median(g[1] for g in got)


if __name__ == "__main__":
    sys.exit(main())
