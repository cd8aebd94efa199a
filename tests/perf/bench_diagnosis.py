"""The diagnosis table (issue 33): per model family, the root cause the diagnosis names (measured
by blame), what its fix recovers of the task metric on held-out samples, false alarms on the
healthy twins (layers carrying a cause, root causes named), and the time of compare + blame; then
the cost of blame on MobileNetV2 160 as a whole process (`compare` with and without --no-blame).

    .venv/bin/python tests/perf/bench_diagnosis.py [--mobilenet-samples 512] [--skip-mobilenet]

Families (built at first use into .fixture-cache): the bundled example; digits depthwise-separable
CNNs with per-tensor weights whose depthwise channels spread over 2 and 3 decades
(`tests/helpers/diagnosis_zoo.py`), and their ReLU6 twins (`tests/helpers/diagnosis_zoo_relu6.py`:
fixed by relu6_equalize, DFQ's ReLU6 -> ReLU, the float change stated in the root cause's note; and
two ReLU6-trained twins: one rarely reaching 6, where the recipe applies with a measured float
change, one clamping often, where it is refused with the reason); a digits CNN with int8 inputs whose calibration was dimmer
than the real inputs; the healthy separable twin (per-channel); the converter-built 32-block
transformer (~1,330 int8 layers, random samples) of `tests/helpers/graph_fixtures.py`; a digits
transformer encoder quantized by litert-quantizer whose first layer-norm MEAN clips
(`tests/helpers/diagnosis_zoo_transformer.py`), its unplanted litert-quantizer and converter int8
twins (held-out digits; by the samples they carry real measured causes or none); the
MobileNetV2-like pair of `tests/helpers/surgical_fixtures.py` (random weights and images) and the
generated 1,500-op residual pair of `tests/helpers/many_op_fixtures.py` with no block planted.
Healthy twins: "causes on layers" counts layers with a cause (the issue: <= 2 %) and the proposed
fixes measured under 0.5 dB (the issue: none).
Recovery = (accuracy after the fix - before) / (float - before), on the samples held out from
calibration.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(REPO)]

from inspector.core.compare.options import CompareOptions  # noqa: E402
from inspector.core.requantize.blame import compare_and_blame  # noqa: E402
from inspector.core.samples.settings import ALL, SampleSettings  # noqa: E402

CACHE = REPO / ".fixture-cache"


def families() -> list[tuple[str, str, str, SampleSettings, bool]]:
    """(family, float, quant, samples, healthy)."""
    from inspector.paths import example_inputs, example_pair
    from tests.helpers import diagnosis_zoo as zoo
    from tests.helpers import diagnosis_zoo_relu6 as zoo6
    from tests.helpers import diagnosis_zoo_transformer as zt
    from tests.helpers.graph_fixtures import deep_transformer
    from tests.helpers.many_op_fixtures import residual_pair
    from tests.helpers.surgical_fixtures import cache_paths
    from tests.helpers.surgical_fixtures import npz as mnv2_npz

    m = {**zoo.models(CACHE), **zoo6.models(CACHE), **zoo6.trained(CACHE), **zt.models(CACHE), **cache_paths(CACHE)}
    npz = str(zoo.held_out(CACHE))
    rf, rq = residual_pair(CACHE, 500, -1)  # no block planted
    ef, eq = example_pair()
    digits = SampleSettings(ALL, source=npz)
    planted = _planted()
    return [
        ("bundled example", str(ef), str(eq), SampleSettings(ALL, source=str(example_inputs())), False),
        *planted,
        ("depthwise, 2 decades, per-tensor", str(m["dw2_float"]), str(m["dw2_int8"]), digits, False),
        ("depthwise, 3 decades, per-tensor", str(m["dw3_float"]), str(m["dw3_int8"]), digits, False),
        ("depthwise ReLU6, 2 decades, per-tensor", str(m["r6dw2_float"]), str(m["r6dw2_int8"]), digits, False),
        ("depthwise ReLU6, 3 decades, per-tensor", str(m["r6dw3_float"]), str(m["r6dw3_int8"]), digits, False),
        ("depthwise ReLU6 trained, rarely 6, 2 dec.", str(m["r6t_float"]), str(m["r6t_int8"]), digits, False),
        ("depthwise ReLU6 trained, clamping, 2 dec.", str(m["r6s_float"]), str(m["r6s_int8"]), digits, False),
        ("integer input, narrow range", str(m["intin_float"]), str(m["intin_int8"]), digits, False),
        ("transformer (litert-quantizer), LN MEAN clipped", str(m["tr_float"]), str(m["tr_int8"]), digits, False),
        ("healthy CNN (separable, per-channel)", str(m["healthy_float"]), str(m["healthy_int8"]), digits, True),
        ("transformer (litert-quantizer), unplanted", str(m["tr_float"]), str(m["tr_unplanted_int8"]), digits, False),
        ("unplanted transformer (converter int8)", str(m["tr_float"]), str(m["tr_converter_int8"]), digits, True),
        ("healthy MobileNetV2-like (random images)", str(m["mnv2_float"]), str(m["mnv2_int8"]),
         SampleSettings(ALL, source=str(mnv2_npz(CACHE, "eval", 48, 2))), True),
        ("healthy residual, 1,500 ops (random)", str(rf), str(rq), SampleSettings(32), True),
        ("deep residual (transformer, 32 blocks, random)", str(deep_transformer(CACHE, 32, "float")),
         str(deep_transformer(CACHE, 32, "int8")), SampleSettings(32), True),
    ]  # fmt: skip


def _planted() -> list[tuple[str, str, str, SampleSettings, bool]]:
    """The planted families of tests/core/requantize/test_blame_planted.py (B's flatbuffer edited;
    an outlier channel and detector heads built by the converter)."""
    import tempfile

    import numpy as np

    from tests.core.requantize.test_blame_planted import EVAL, PLANTS
    from tests.helpers import diagnosis_fixtures as dx
    from tests.helpers import inside_fixtures as ix
    from tests.helpers.task_fixtures import TaskFixtures

    folder = Path(tempfile.mkdtemp(prefix="tqi-planted-"))
    paths = dx.models(CACHE)
    f, q = paths["diag_float"], paths["diag_int8"]
    npz = SampleSettings(EVAL, seed=1, source=str(TaskFixtures(CACHE).npz(EVAL)))
    rows = []
    for plant, (edit, name, _, _) in PLANTS.items():
        b = folder / f"{plant.replace(' ', '_')}.tflite"
        b.write_bytes(edit(q.read_bytes(), dx.op_index(q, name)))
        rows.append((f"planted {plant} (trained CNN)", str(f), str(b), npz, False))
    out = ix.outlier_models(CACHE)
    rows.append(("outlier channel (trained CNN)", str(out["out_float"]), str(out["out_int8"]), npz, False))
    det = ix.detector_models(CACHE)
    np.save(folder / "det.npy", ix.detector_images(48, 3))
    rows.append(("detector heads concatenated", str(det["det_float"]), str(det["det_int8"]),
                 SampleSettings(ALL, source=str(folder / "det.npy")), False))  # fmt: skip
    return rows


def row(name: str, f: str, q: str, samples: SampleSettings, healthy: bool) -> list[str]:
    t0 = time.perf_counter()
    r = compare_and_blame(f, q, CompareOptions(samples=samples))
    dt = time.perf_counter() - t0
    layers = {lay.op_index: lay for lay in r.layers}
    flagged = sum(1 for lay in layers.values() if lay.diagnosis is not None and lay.diagnosis.cause != "none")
    if r.root_causes:
        rc = r.root_causes[0]
        cause = f"op {rc.op_index} {rc.op_type} {rc.cause} ({100 * rc.share:.0f}%)"
        fix = "-" if rc.fix is None else f"{rc.fix.edit} {','.join(map(str, rc.fix.ops))}: {rc.fix_gain_db:+.1f} dB"
        if rc.accuracy is not None:
            fl, b, a = rc.accuracy
            rec = f"{b:.1f} -> {a:.1f}% (float {fl:.1f}%, {100 * (a - b) / (fl - b):.0f}% of the drop)" if fl > b else f"{b:.1f} -> {a:.1f}%"
        else:
            rec = "(unlabelled)"
    else:
        cause, fix, rec = "none", "-", "-"
    small = sum(1 for rc in r.root_causes if rc.fix is not None and (rc.fix_gain_db or 0.0) < 0.5)  # the issue: none
    alarms = (f"{flagged}/{len(layers)} layers ({100 * flagged / max(len(layers), 1):.1f}%), {len(r.root_causes)} root, "
              f"{small} fix < 0.5 dB") if healthy else f"{flagged}/{len(layers)} layers"  # fmt: skip
    return [name, cause, fix, rec, alarms, f"{dt:.1f} s"]


def mobilenet(samples: int) -> None:
    from bench_cli import pair

    f, q = pair()
    times = {}
    for flag in ("--no-blame", "--blame", "--no-blame", "--blame"):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "inspector", "compare", str(f), str(q), "--samples", str(samples), flag,
                        "--json", os.devnull], cwd=REPO, check=True, capture_output=True)  # fmt: skip
        times.setdefault(flag, []).append(time.perf_counter() - t0)
    a, b = min(times["--no-blame"]), min(times["--blame"])
    print(f"\nMobileNetV2 160, {samples} random samples, whole process (best of 2): compare --no-blame {a:.1f} s, "
          f"with blame {b:.1f} s: +{100 * (b - a) / a:.0f}% (target <= +50%; {os.cpu_count()} CPUs, maybe shared)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mobilenet-samples", type=int, default=512)
    ap.add_argument("--skip-mobilenet", action="store_true")
    args = ap.parse_args()
    head = ["family", "root cause named (share of output error)", "fix (held-out gain)", "task metric, held out",
            "causes on layers", "compare+blame"]  # fmt: skip
    rows = [row(*fam) for fam in families()]
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(len(head))]
    for r in [head, *rows]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))
    if not args.skip_mobilenet:
        mobilenet(args.mobilenet_samples)
    return 0


if __name__ == "__main__":
    sys.exit(main())
