"""The Requantize tab's calibration line when the sample count is not known ahead ("all samples of
a file"): it read "the first 2/3 calibrate and the rest are held out to measure gains (all of
them, in-sample, under 24)", two claims at once; it now says which holds when."""

from __future__ import annotations

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.holdout import MIN_HELD_OUT
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.gui.requantize.feature import sample_text


def test_unknown_count_says_when_samples_are_held_out():
    text = sample_text(CompareOptions(samples=SampleSettings(count=ALL, source="inputs.npz")))
    assert f"from {3 * MIN_HELD_OUT} samples on, the first 2/3 calibrate" in text
    assert "with fewer, all of them do both (gains in-sample)" in text
    assert "(all of them, in-sample" not in text
    known = sample_text(CompareOptions(samples=SampleSettings(count=8, source="inputs.npz")))
    assert "in-sample: 8 sample(s)" in known  # a known count gets the split's own note
