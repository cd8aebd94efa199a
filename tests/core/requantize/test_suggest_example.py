"""Suggest on the bundled example finds the fix the diagnosis names.

The example's drop comes from the model input's range: B's input scale clips 22.8 % of the
float values at op 1 RESHAPE, the op that reads the input, and the diagnosis says "input_range →
recalibrate op 1" (it said "clipping" until the layer's cause took the root cause's name).
Before, Suggest never tried it: op 1 has no finite isolated error (it is exact on B's own
quantized input) and RESHAPE is no ordinary candidate, so Suggest offered keep float
on 8 layers, 9.62 → 9.97 dB, short of a 20 dB target. Now the diagnosed edit is a candidate and
is tried beside keep float.

Independent check: the suggested model and the float model run in LiteRT (reference kernels
and XNNPACK) on the held-out samples Suggest measured on; numpy computes the output SQNR and the
accuracy against the example's labels.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.requantize.suggest_options import SurgicalSuggestOptions
from inspector.core.requantize.suggest_surgical import suggest_surgical
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import SampleSettings
from inspector.core.viewdata.suggest_view import suggest_lines, suggest_view
from inspector.paths import example_inputs, example_pair
from tests.helpers.surgical_helpers import run_both, sqnr


@pytest.fixture(scope="module")
def suggested():
    f, q = example_pair()
    opts = SurgicalSuggestOptions(samples=SampleSettings(count=None, source=str(example_inputs())))
    return f, q, suggest_surgical(str(f), str(q), 20.0, opts)


def test_suggest_recalibrates_the_op_reading_the_input(suggested):
    f, q, r = suggested
    assert r.met and r.baseline_sqnr_db < 12 and r.best_sqnr_db > 25
    assert [(s.ops, s.edit) for s in r.steps] == [((1,), "recalibrate")]  # the diagnosis' fix, one step
    assert r.steps[0].size_bytes == q.stat().st_size  # no size cost
    first = r.candidates[0]
    assert (first["op"], first["type"], first["cause"], first["isolated"]) == (1, "RESHAPE", "input_range", "exact")
    assert first["accumulated_sqnr_db"] == pytest.approx(12.47, abs=0.05)
    text = "\n".join(suggest_lines(suggest_view(r)))
    assert "12.5 dB accumulated (isolated exact), input_range" in text
    assert apply_plan(str(f), str(q), r.plan).model_bytes == r.best.model_bytes  # the plan reproduces the bytes


def test_the_suggested_model_is_measured_independently(suggested):
    f, q, r = suggested
    data = np.load(example_inputs())
    xs, labels = data["image"].astype(np.float32), data["labels"]
    held = slice(split_samples(len(xs)).evaluation_start, len(xs))
    ref = run_both(f.read_bytes(), xs[held])["reference"]
    before, after = run_both(q.read_bytes(), xs[held]), run_both(r.best.model_bytes, xs[held])
    for rt in ("reference", "xnnpack"):
        assert sqnr(ref, before[rt]) == pytest.approx(r.baseline_sqnr_db, abs=0.1)
        assert sqnr(ref, after[rt]) == pytest.approx(r.best_sqnr_db, abs=0.1)
    float_acc = np.mean(ref.argmax(1) == labels[held])
    int8_acc = np.mean(before["xnnpack"].argmax(1) == labels[held])
    fixed_acc = np.mean(after["xnnpack"].argmax(1) == labels[held])
    assert int8_acc < float_acc - 0.04 and fixed_acc >= float_acc - 0.02  # the drop is gone
