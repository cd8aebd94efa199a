"""A surgical edit's held-out gain in words (CLI `requantize` and the GUI's version notes): an edit
that lowers the output SQNR says it is not worth keeping (issue 33 §3: never kept without a word)."""

from __future__ import annotations

from inspector.core.requantize.held_out import HeldOutGain
from inspector.core.samples.holdout import split_samples


def test_a_loss_is_said_and_a_gain_or_rounding_is_not():
    split = split_samples(96)
    worse = HeldOutGain(split, "out", 30.0, 28.3).text()
    assert worse.startswith("output SQNR 30.00 dB → 28.30 dB (-1.70 dB) on the 32 held-out samples")
    assert worse.endswith("the edit lowers the output SQNR: not worth keeping")
    assert "not worth" not in HeldOutGain(split, "out", 30.0, 30.5).text()
    assert "not worth" not in HeldOutGain(split, "out", 30.0, 29.98).text()  # rounding, not a loss
