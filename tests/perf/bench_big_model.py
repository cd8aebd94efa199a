"""Big models: open time, memory against file size, histogram of the largest tensor, a run.

    .venv/bin/python tests/perf/bench_big_model.py

Generates (once, cached in .fixture-cache/hostile-<key>/) a ~273 MB float chain of
FULLY_CONNECTED layers and its ~69 MB int8 twin, then measures in a fresh process so the
peak RSS is not the generator's:
- `Model(path)` wall time with every tensor parsed (target < 0.5 s),
- anonymous memory (RssAnon: what the process really owns) against file size; pages of the
  mapped file show as RssFile (page cache, shared, reclaimable) and are reported apart,
- weight histogram + error metrics of the largest tensor pair (`core.weights`, chunked and
  subsampled),
- one LiteRT run of each model, then `compare_models` on 2 and 8 samples (peak RSS must not
  grow with the number of samples: statistics are accumulated).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
sys.path[:0] = [str(REPO)]  # tests.helpers


def _status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        k, _, v = line.partition(":")
        if k in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
            out[k] = int(v.split()[0]) * 1024
    return out


def _mb(x: float) -> str:
    return f"{x / 1e6:7.1f} MB"


def measure(fpath: str, qpath: str) -> dict:
    import numpy as np

    from inspector.core.compare.weights import analyze_tensors
    from inspector.core.tflite.model import Model

    res: dict = {"float_size": Path(fpath).stat().st_size, "quant_size": Path(qpath).stat().st_size}
    base = _status()
    t0 = time.perf_counter()
    fm = Model(fpath)
    res["open_float_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    qm = Model(qpath)
    res["open_quant_s"] = time.perf_counter() - t0
    after_open = _status()
    res["open_anon_growth"] = after_open["RssAnon"] - base["RssAnon"]
    res["open_file_rss"] = after_open["RssFile"] - base["RssFile"]

    largest = max(fm.main.tensors, key=lambda t: t.buffer_size)
    twin = qm.main.tensor_by_name(largest.name)
    res["largest"] = f"{largest.name} {list(largest.shape)} ({largest.buffer_size / 1e6:.0f} MB float)"
    t0 = time.perf_counter()
    wa = analyze_tensors(fm, largest, qm, twin)
    res["histogram_s"] = time.perf_counter() - t0
    res["histogram_used"] = f"{wa.used_elements:,} of {wa.total_elements:,} values"
    res["histogram_sqnr_db"] = wa.metrics.sqnr_db if wa.metrics else None
    after_hist = _status()
    res["hist_anon_growth"] = after_hist["RssAnon"] - base["RssAnon"]
    res["hist_peak_rss"] = after_hist["VmHWM"]

    x = np.random.default_rng(0).uniform(-1, 1, (1, largest.shape[1])).astype(np.float32)
    t0 = time.perf_counter()
    from ai_edge_litert.interpreter import Interpreter

    outs = []
    for p in (fpath, qpath):
        it = Interpreter(model_path=p)
        it.allocate_tensors()
        it.set_tensor(it.get_input_details()[0]["index"], x)
        it.invoke()
        outs.append(it.get_tensor(it.get_output_details()[0]["index"]).copy())
        del it
    res["litert_run_s"] = time.perf_counter() - t0
    y, yq = outs
    res["output_sqnr_db"] = float(10 * np.log10(np.sum(y**2) / np.sum((y - yq) ** 2)))
    after_run = _status()
    res["run_peak_rss"] = after_run["VmHWM"]
    if importlib.util.find_spec("inspector.core.compare.comparison") is not None:
        from inspector.core.compare.comparison import CompareOptions, compare_models
        from inspector.core.samples.settings import SampleSettings

        for n in (2, 8):
            t0 = time.perf_counter()
            r = compare_models(fpath, qpath, CompareOptions(samples=SampleSettings(count=n)))
            res[f"compare_{n}_s"] = time.perf_counter() - t0
            res[f"compare_{n}_peak_rss"] = _status()["VmHWM"]
            res[f"compare_{n}_layers"] = len(r.layers)
            res["compare_output_sqnr_db"] = r.outputs[0].metrics.sqnr_db
    end = _status()
    res["run_anon_after"] = end["RssAnon"] - base["RssAnon"]
    res["baseline_rss"] = base["VmRSS"]
    return res


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--measure":
        print(json.dumps(measure(sys.argv[2], sys.argv[3])))
        return 0
    from tests.helpers.hostile_fixtures import HostileCache

    cache = HostileCache()
    t0 = time.perf_counter()
    fpath, qpath = cache.path("big_float"), cache.path("big_int8")
    print(f"models ready in {time.perf_counter() - t0:.1f} s: {fpath.name} {_mb(fpath.stat().st_size)}, {qpath.name} {_mb(qpath.stat().st_size)}")
    proc = subprocess.run([sys.executable, __file__, "--measure", str(fpath), str(qpath)], capture_output=True, text=True)
    if proc.returncode:
        print(proc.stderr, file=sys.stderr)
        return proc.returncode
    r = json.loads(proc.stdout.strip().splitlines()[-1])
    size = r["float_size"]
    print(f"open float model ({_mb(size)}):   {r['open_float_s'] * 1e3:7.1f} ms  (target < 500 ms)")
    print(f"open int8 model  ({_mb(r['quant_size'])}):   {r['open_quant_s'] * 1e3:7.1f} ms")
    print(f"anonymous memory after opening both: {_mb(r['open_anon_growth'])}  ({100 * r['open_anon_growth'] / size:.2f}% of the float file)")
    print(f"mapped file pages resident after open: {_mb(r['open_file_rss'])}")
    print(f"histogram + metrics of {r['largest']}: {r['histogram_s'] * 1e3:.0f} ms, {r['histogram_used']}, SQNR {r['histogram_sqnr_db']:.1f} dB")
    print(f"  anonymous memory growth: {_mb(r['hist_anon_growth'])}, peak RSS {_mb(r['hist_peak_rss'])} (baseline {_mb(r['baseline_rss'])})")
    print(f"LiteRT run of both models (1 sample): {r['litert_run_s']:.2f} s, output SQNR {r['output_sqnr_db']:.1f} dB")
    print(f"  peak RSS {_mb(r['run_peak_rss'])} (XNNPACK packs the weights into its own copy)")
    for n in (2, 8):
        if f"compare_{n}_s" in r:
            print(f"compare_models, {n} random samples, {r[f'compare_{n}_layers']} layers: {r[f'compare_{n}_s']:.2f} s, "
                  f"peak RSS so far {_mb(r[f'compare_{n}_peak_rss'])}, output SQNR {r['compare_output_sqnr_db']:.1f} dB")
    print(f"anonymous memory still held at the end: {_mb(r['run_anon_after'])}")
    ok = r["open_float_s"] < 0.5 and r["open_anon_growth"] < 0.05 * size
    print("PASS" if ok else "FAIL: open slower than 0.5 s or memory grew with the file size")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
