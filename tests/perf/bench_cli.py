"""The command line as a user runs it: `compare` of MobileNetV2 160 over 512 samples, timed as a
whole process (start-up, pair check, worker spawn, inference, statistics, output), with each
layer's own (isolated) error (the default) and with `--no-isolated`, each against plain LiteRT
inference of both models (two threads, one per model), measured round by round in one run; then,
side by side per sample, TensorFlow's QuantizationDebugger.run() and litert-quantizer's
Quantizer.validate() on the same pair's Keras model and files (`--alt-samples` of them: they are
slow).

    .venv/bin/python tests/perf/bench_cli.py [--samples 512] [--repeat 3] [--alt-samples 32] [--skip-alternatives]

Prints each round's timings and ratios, then the medians (targets: the own error <= 1.4x the
--no-isolated run; the --no-isolated whole process <= 1.5x plain inference), and the CPU seconds
of each against plain inference's (the work done, less sensitive to other load). The machine may
be shared: read the per-round ratios, not one number.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import inspect
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
sys.path[:0] = [str(REPO)]

import numpy as np  # noqa: E402

SHAPE = (160, 160, 3)


def _keras_model():
    import tensorflow as tf

    tf.keras.utils.set_random_seed(7)
    return tf.keras.applications.MobileNetV2(weights=None, input_shape=SHAPE, classes=1000)


def _converter(km, data: np.ndarray):
    import tensorflow as tf

    conv = tf.lite.TFLiteConverter.from_keras_model(km)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([data[i : i + 1]] for i in range(len(data)))
    return conv


def pair() -> tuple[Path, Path]:
    """(float, int8) MobileNetV2 160 (random weights, full-integer with float I/O), built once."""
    key = hashlib.sha256((inspect.getsource(pair) + inspect.getsource(_keras_model) + inspect.getsource(_converter)
                          + repr(SHAPE)).encode()).hexdigest()[:12]  # fmt: skip  # the builders' text only
    d = REPO / ".fixture-cache" / f"bench-cli-{key}"
    f, q = d / "mobilenet_v2_160_float.tflite", d / "mobilenet_v2_160_int8.tflite"
    if f.exists() and q.exists():
        return f, q
    import tensorflow as tf

    from tests.helpers.cache import cached_models
    from tests.helpers.fixture_models import representative_images

    def build() -> dict[str, bytes]:
        km = _keras_model()
        return {"f": tf.lite.TFLiteConverter.from_keras_model(km).convert(),
                "q": _converter(km, representative_images(16, 1, SHAPE)).convert()}  # fmt: skip

    cached_models({"f": f, "q": q}, build)
    return f, q


def plain(fpath: Path, qpath: Path, n: int) -> tuple[float, float]:
    """(wall, CPU seconds): both models over the same n random samples, one thread per model,
    outputs read."""
    from ai_edge_litert.interpreter import Interpreter

    its = []
    for p in (fpath, qpath):
        it = Interpreter(model_path=str(p))
        it.allocate_tensors()
        its.append(it)
    data = np.random.default_rng(0).uniform(-1, 1, (n, 1, *SHAPE)).astype(np.float32)

    def run(it) -> None:
        inp, out = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
        for x in data:
            it.set_tensor(inp, x)
            it.invoke()
            it.get_tensor(out)

    t, c = time.perf_counter(), time.process_time()
    ths = [threading.Thread(target=run, args=(it,)) for it in its]
    for th in ths:
        th.start()
    for th in ths:
        th.join()
    return time.perf_counter() - t, time.process_time() - c


def whole_process(fpath: Path, qpath: Path, n: int, *flags: str) -> tuple[float, float]:
    """(wall, CPU seconds) of `python -m inspector compare F Q --samples n --json /dev/null
    [flags]`, start to exit; CPU summed over the process and its descendants (fork server,
    worker), read from /proc every 20 ms (nan elsewhere)."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    argv = [sys.executable, "-m", "inspector", "compare", str(fpath), str(qpath), "--samples", str(n), "--json", os.devnull, *flags]
    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seen: dict[int, float] = {}
    while proc.poll() is None:
        seen.update(_tree_cpu(proc.pid))
        time.sleep(0.02)
    wall = time.perf_counter() - t
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, argv)
    return wall, (sum(seen.values()) if seen else math.nan)


def _tree_cpu(root: int) -> dict[int, float]:
    """{pid: user + system CPU seconds} of `root` and its descendants now (Linux /proc)."""
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    stats: dict[int, tuple[int, float]] = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            f = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        stats[int(d.name)] = (int(f[1]), (int(f[11]) + int(f[12])) / tick)  # ppid, utime + stime
    out, todo = {}, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            out[pid] = stats[pid][1]
            todo += [c for c, (pp, _) in stats.items() if pp == pid]
    return out


def quantization_debugger(n: int) -> float:
    """Seconds of QuantizationDebugger.run() over n samples (its constructor, which converts, untimed)."""
    import tensorflow as tf

    from tests.helpers.fixture_models import representative_images

    data = np.random.default_rng(0).uniform(-1, 1, (n, *SHAPE)).astype(np.float32)
    with contextlib.redirect_stdout(sys.stderr):  # the converter's chatter stays out of the table
        conv = _converter(_keras_model(), representative_images(16, 1, SHAPE))
        dbg = tf.lite.experimental.QuantizationDebugger(converter=conv, debug_dataset=lambda: ([data[i : i + 1]] for i in range(n)))
        t = time.perf_counter()
        dbg.run()
        return time.perf_counter() - t


def litert_validate(fpath: Path, qpath: Path, n: int) -> float:
    """Seconds of litert-quantizer's Quantizer.validate() (every tensor, MSE) over n samples."""
    from litert_quantizer import quantizer

    from inspector.core.tflite.model import load_model

    sig = load_model(fpath).signatures[0]
    name = next(iter(sig.inputs))
    data = np.random.default_rng(0).uniform(-1, 1, (n, 1, *SHAPE)).astype(np.float32)
    q = quantizer.Quantizer(str(fpath), previous_quantized_model=str(qpath))
    t = time.perf_counter()
    q.validate(test_data={sig.key: [{name: x} for x in data]})
    return time.perf_counter() - t


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--alt-samples", type=int, default=32, help="samples for QuantizationDebugger and validate()")
    ap.add_argument("--skip-alternatives", action="store_true", help="skip QuantizationDebugger and validate()")
    args = ap.parse_args(argv)
    fpath, qpath = pair()
    n = args.samples
    print(f"MobileNetV2 160x160 random weights, {n} samples, {os.cpu_count()} CPUs (shared: read the per-round ratios)")
    whole_process(fpath, qpath, 2)  # rewritten models and the fixture cached once, as for any second run
    rows = []
    for k in range(max(1, args.repeat)):
        p, pc = plain(fpath, qpath, n)
        i, ic = whole_process(fpath, qpath, n)
        a, ac = whole_process(fpath, qpath, n, "--no-isolated")
        rows.append((p, i, a, pc, ic, ac))
        print(f"  round {k + 1}: plain {p:6.2f} s | compare {i:6.2f} s = {i / p:4.2f}x | --no-isolated {a:6.2f} s = "
              f"{a / p:4.2f}x | own error {i / a:4.2f}x | CPU s: plain {pc:5.2f}, compare {ic:5.2f}, "
              f"--no-isolated {ac:5.2f}", flush=True)  # fmt: skip
    med = statistics.median
    p, i, a = (med(c) for c in list(zip(*rows, strict=True))[:3])
    print(f"\n  median of {len(rows)} rounds (each ratio: the median of the rounds' ratios)")
    table = [("plain inference of both models (2 threads)", p, 1.0),
             ("compare, whole process (own error included)", i, med(r[1] / r[0] for r in rows)),
             ("compare --no-isolated, whole process", a, med(r[2] / r[0] for r in rows))]  # fmt: skip
    if not args.skip_alternatives:
        m = args.alt_samples
        table.append((f"QuantizationDebugger.run() ({m} samples, scaled to {n})", quantization_debugger(m) * n / m, None))
        table.append((f"litert-quantizer validate() ({m} samples, scaled to {n})", litert_validate(fpath, qpath, m) * n / m, None))
    for label, t, ratio in table:
        vs = f"{ratio:5.2f}x plain" if ratio is not None else f"{t / p:5.2f}x plain"
        print(f"  {label:<58} {t:8.2f} s  {1000 * t / n:7.1f} ms/sample  {vs}")
    print(f"\n  own error: compare / compare --no-isolated:  {med(r[1] / r[2] for r in rows):5.2f}x   target <= 1.4x")
    print(f"  compare --no-isolated / plain inference:      {med(r[2] / r[0] for r in rows):5.2f}x   target <= 1.5x")
    cp, ci, ca = (med(r[k] / r[3] for r in rows) for k in (3, 4, 5))
    print(f"  CPU seconds / plain inference's: compare {ci:5.2f}x, --no-isolated {ca:5.2f}x (the work done, less"
          " sensitive to other load than the wall-clock ratios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
