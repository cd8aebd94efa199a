"""Suggest's step line: a latency change that rounds to zero read "latency -0.00 ms" (seen in the
GUI on the example pair's re-calibration step)."""

from __future__ import annotations

from inspector.core.viewdata.suggest_view import SuggestStep, SuggestView, suggest_lines


def test_a_change_that_rounds_to_zero_has_no_sign():
    step = SuggestStep("re-calibrated", "op 2 dw1 (DEPTHWISE_CONV_2D)", 2.75, 30.4, size_delta_bytes=-20, latency_delta_ms=-0.0004)
    view = SuggestView("surgical", False, "logits (op 12)", 27.64, 30.4, 40.0, (step,), (), 9, 16, (), None)
    line = next(li for li in suggest_lines(view) if li.startswith("1. "))
    assert "latency +0.00 ms" in line and "size +0.0 KiB" in line, line
