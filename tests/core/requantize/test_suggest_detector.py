"""Suggest sees inside a detector's output: the objective reads a concatenated output by its worst
slice. The int8 detector's output (pixel boxes 0..640 beside 3 sigmoid scores, concatenated under
one scale) reads 50 dB as a whole while every score is lost; Suggest used to say "meets the
target, 50.14 dB, 0 steps". Now its baseline is the score slice's 0 dB, and it offers the
diagnosis' fix (keep float on the score reshape and the concatenation) as one step.

Independent check: numpy on LiteRT outputs (reference kernels and XNNPACK) of the float, int8 and
suggested models on the held-out samples, slice by slice.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.requantize.held_out import held_out_gain
from inspector.core.requantize.suggest_options import SurgicalSuggestOptions
from inspector.core.requantize.suggest_surgical import suggest_surgical
from inspector.core.requantize.surgical import plan_samples
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.inside_fixtures import detector_images, detector_models
from tests.helpers.paths import REPO
from tests.helpers.surgical_helpers import run_both, sqnr

BOXES, SCORES = slice(0, 4), slice(4, 7)  # the output's last axis: 4 box coordinates, then 3 class scores


@pytest.fixture(scope="module")
def detector(tmp_path_factory):
    m = detector_models(REPO / ".fixture-cache")
    xs = detector_images(48)
    npz = tmp_path_factory.mktemp("det") / "images.npz"
    np.savez(npz, images=xs)
    opts = SurgicalSuggestOptions(samples=SampleSettings(count=None, source=str(npz)))
    return m["det_float"], m["det_int8"], xs, suggest_surgical(str(m["det_float"]), str(m["det_int8"]), 40.0, opts)


def test_suggest_reads_the_worst_slice_and_fixes_it(detector):
    f, q, xs, r = detector
    held = xs[split_samples(len(xs)).evaluation_start :]
    ref = run_both(f.read_bytes(), held)["reference"]
    before, after = run_both(q.read_bytes(), held), run_both(r.best.model_bytes, held)
    for rt in ("reference", "xnnpack"):
        assert sqnr(ref, before[rt]) > 45 and sqnr(ref[..., SCORES], before[rt][..., SCORES]) < 1  # what the case is
        assert r.baseline_sqnr_db == pytest.approx(sqnr(ref[..., SCORES], before[rt][..., SCORES]), abs=0.1)
        worst_after = min(sqnr(ref, after[rt]), sqnr(ref[..., BOXES], after[rt][..., BOXES]),
                          sqnr(ref[..., SCORES], after[rt][..., SCORES]))
        assert r.best_sqnr_db == pytest.approx(worst_after, abs=0.1) and worst_after > 40
    assert r.met and [(s.ops, s.edit) for s in r.steps] == [((16, 17), "keep_float")]  # the diagnosed fix, one step
    assert any("worst part" in n for n in r.notes)


def test_the_held_out_gain_names_the_slice(detector):
    f, q, _xs, r = detector
    samples = plan_samples(r.plan, load_model(str(f)), load_model(str(q)))  # the samples Suggest measured on
    g = held_out_gain(str(f), str(q), r.best.model_bytes, samples)
    assert g.before_db == pytest.approx(r.baseline_sqnr_db, abs=1e-6) and g.after_db == pytest.approx(r.best_sqnr_db, abs=1e-6)
    assert g.part_before.startswith("slice 4:7 of") and "LOGISTIC" in g.part_before
    assert "its worst part: slice 4:7" in g.text() and g.to_json()["worst_part_before"] == g.part_before
