"""Issue 25's "Done means", end to end: the diagnosis of a case built at test time proposes a fix,
the fix is applied exactly as the GUI's Apply fix does (`diagnosis_fix.fix_plan`, then the
requantize loop's job `jobs.surgical_job` on the comparison's samples, calibrating on the
first 2/3 and measuring on the held-out rest), and the result is checked independently:

- outlier channel (one conv output channel ×60, the consumer's matching weights ÷60, a
  function-preserving plant): `channel_imbalance` with Fix("equalize", (P, C)); the model output
  SQNR on the held-out samples, from numpy on LiteRT's outputs (reference kernels), rises by
  ≥ 6 dB; every tensor but P's and C's weights and biases and P's output is byte-identical (an
  independent parse with the `tflite` package); compared again, neither op is diagnosed
  `channel_imbalance` and P is not called clipping;
- detector head (pixel boxes concatenated with sigmoid scores): `mixed_ranges`, its fix raises the
  score slice's SQNR on held-out samples by ≥ 20 dB (numpy on LiteRT's outputs), and every op
  outside the fix is untouched.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import THRESHOLDS
from inspector.core.compare.diagnosis_types import Fix
from inspector.core.progress import NO_TASK
from inspector.core.requantize.diagnosis_fix import fix_headline, fix_outcome, fix_plan
from inspector.core.requantize.jobs import surgical_job
from inspector.core.samples.holdout import HELD_OUT
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers import inside_fixtures as ix
from tests.helpers.paths import REPO
from tests.helpers.reference import output_rows, sqnr_db
from tests.helpers.surgical_helpers import assert_untouched, describe, edited_names
from tests.helpers.task_fixtures import make_dataset

CACHE = REPO / ".fixture-cache"
N = 48  # 32 calibrate, 16 held out (samples.holdout)
HELD = slice(32, N)


def _options(npz) -> CompareOptions:
    """What the GUI compares with: the samples of an .npz, its default runtime and options."""
    return CompareOptions(samples=SampleSettings(count=None, source=str(npz)))


def _apply_like_the_gui(f, q, fix: Fix, opts: CompareOptions, out):
    """Apply fix: the diagnosis' fix as a plan, run by the requantize loop's job on the shown
    comparison's samples (the job puts them into the plan, as the GUI's run does)."""
    run = surgical_job(str(f), str(q), fix_plan(fix), opts, str(out), (str(f), str(q)), task=NO_TASK)
    return run.result


@pytest.fixture(scope="module")
def outlier(tmp_path_factory):
    paths = ix.outlier_models(CACHE)
    folder = tmp_path_factory.mktemp("outlier_fix")
    images = make_dataset(N, seed=5)[0]
    np.savez(folder / "images.npz", image=images)
    return {**paths, "images": images, "npz": folder / "images.npz", "dir": folder}


@pytest.fixture(scope="module")
def detector(tmp_path_factory):
    paths = ix.detector_models(CACHE)
    folder = tmp_path_factory.mktemp("detector_fix")
    images = ix.detector_images(N, seed=3)
    np.savez(folder / "images.npz", image=images)
    np.savez(folder / "held.npz", image=images[HELD])
    return {**paths, "images": images, "npz": folder / "images.npz", "held": folder / "held.npz", "dir": folder}


def test_the_outlier_channel_fix_equalizes_and_raises_the_held_out_output(outlier):
    f, q = outlier["out_float"], outlier["out_int8"]
    assert ix.OUTLIER_K >= 30
    opts = _options(outlier["npz"])
    res = compare_models(str(f), str(q), opts)
    convs = [lay for lay in res.layers if lay.op_type == "CONV_2D"]
    p, c = convs[1].op_index, convs[2].op_index  # conv1 -> producer -> consumer
    d = convs[1].diagnosis
    assert d.cause == "channel_imbalance" and d.fix == Fix("equalize", (p, c)), d
    assert convs[2].diagnosis.fix == d.fix  # the damaged consumer proposes the same fix

    new = outlier["dir"] / "equalized.tflite"
    r = _apply_like_the_gui(f, q, d.fix, opts, new)
    assert r.split is not None and r.split.evaluation == HELD_OUT and r.split.calibration_count == 32
    assert r.gain is not None and r.gain.split.evaluation_start == 32

    # the gain, independently: numpy on LiteRT's outputs for the 16 held-out samples
    held = outlier["images"][HELD]
    ref = output_rows(f.read_bytes(), held)
    before = sqnr_db(ref, output_rows(q.read_bytes(), held))
    after = sqnr_db(ref, output_rows(new.read_bytes(), held))
    print(f"outlier: output SQNR on held-out samples {before:.2f} -> {after:.2f} dB "
          f"(the job's figure {r.gain.before_db:.2f} -> {r.gain.after_db:.2f} dB)")  # fmt: skip
    assert after - before >= 6.0
    assert r.gain.before_db == pytest.approx(before, abs=0.5) and r.gain.after_db == pytest.approx(after, abs=0.5)

    # byte-identical elsewhere: only P's and C's weights and biases, and P's output parameters, differ
    qm = load_model(q)
    old, edited = describe(q.read_bytes()), describe(new.read_bytes())
    names = {qm.main.tensors[qm.main.ops[op].inputs[k]].name for op in (p, c) for k in (1, 2)}
    names.add(qm.main.tensors[qm.main.ops[p].outputs[0]].name)
    assert set(old["tensors"]) == set(edited["tensors"]) and old["ops"] == edited["ops"]
    assert {n for n, rec in old["tensors"].items() if edited["tensors"][n] != rec} == names

    # compared again (on the same samples, with and without the own error): the imbalance is gone,
    # and P (whose output now stands for A's ÷ s) is not called clipping
    for isolated in (True, False):
        again = compare_models(str(f), str(new), replace(opts, isolated=isolated))
        causes = {lay.op_index: lay.diagnosis.cause for lay in again.layers}
        assert causes[p] not in ("channel_imbalance", "clipping") and causes[c] != "channel_imbalance", causes
        assert "channel_imbalance" not in causes.values()
    producer = next(lay for lay in again.layers if lay.op_index == p)
    assert producer.channels.range_ratio < THRESHOLDS.imbalance_ratio
    # what Apply fix says: P and C before -> after, P against A's output ÷ s, and the model output
    lines = fix_outcome(res, again, d.fix)
    b_p, a_p = convs[1].metrics.sqnr_db, producer.metrics.sqnr_db
    assert lines[0].startswith(f"op {p} CONV_2D: SQNR {b_p:.2f} → {a_p:.2f} dB (against the float output ÷ s)")
    assert lines[1].startswith(f"op {c} CONV_2D: SQNR") and lines[-1].startswith("model output SQNR")
    assert a_p > b_p


def test_the_detector_head_fix_raises_the_held_out_score_slice(detector):
    f, q = detector["det_float"], detector["det_int8"]
    opts = _options(detector["npz"])
    res = compare_models(str(f), str(q), opts)
    cat = next(lay for lay in res.layers if lay.op_type == "CONCATENATION")
    d = cat.diagnosis
    assert d.cause == "mixed_ranges" and d.fix is not None and cat.op_index in d.fix.ops, d

    new = detector["dir"] / "fixed.tflite"
    r = _apply_like_the_gui(f, q, d.fix, opts, new)
    assert sorted(r.edited_ops) == sorted(d.fix.ops)

    # the score slice (inputs 4:7 of the last axis) on the held-out samples, numpy on LiteRT's outputs
    held = detector["images"][HELD]
    ref = output_rows(f.read_bytes(), held)
    assert ref.shape[-1] == ix.BOXES + ix.CLASSES
    scores = slice(ix.BOXES, ix.BOXES + ix.CLASSES)
    before = sqnr_db(ref[..., scores], output_rows(q.read_bytes(), held)[..., scores])
    after = sqnr_db(ref[..., scores], output_rows(new.read_bytes(), held)[..., scores])
    app_before = compare_models(str(f), str(q), _options(detector["held"])).outputs[0].slices[1].sqnr_db
    app_after = compare_models(str(f), str(new), _options(detector["held"])).outputs[0].slices[1].sqnr_db
    print(f"detector: score slice SQNR on held-out samples {before:.2f} -> {after:.2f} dB "
          f"(the app's {app_before:.2f} -> {app_after:.2f} dB)")  # fmt: skip
    assert after - before >= 20.0 and app_after - app_before >= 20.0
    # Apply fix's one-line outcome names the slice (the whole output hides it)
    again = compare_models(str(f), str(new), opts)
    ob, oa = res.outputs[0], again.outputs[0]
    assert fix_headline(res, again) == (f"output SQNR {ob.metrics.sqnr_db:.2f} → {oa.metrics.sqnr_db:.2f} dB; output slice "
                                        f"4:7 SQNR {ob.slices[1].sqnr_db:.2f} → {oa.slices[1].sqnr_db:.2f} dB")  # fmt: skip
    # every op outside the fix and every tensor they hold is untouched, but the DEQUANTIZE that
    # made the concatenation B's float output: the float concatenation now writes that output itself
    qm = load_model(q)
    (dq,) = [k for k, op in enumerate(qm.main.ops) if cat.quant_tensor in op.inputs]
    assert qm.main.ops[dq].type == "DEQUANTIZE" and qm.main.ops[dq].outputs[0] in qm.main.outputs
    outs, consts = edited_names(q.read_bytes(), [*d.fix.ops, dq])
    assert_untouched(q.read_bytes(), new.read_bytes(), outs, consts)
    final = describe(new.read_bytes())["ops"][(qm.main.tensors[qm.main.ops[dq].outputs[0]].name,)]
    assert final[0] == 2  # CONCATENATION
