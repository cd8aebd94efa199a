"""Float16 pairs in the GUI: the pair banner names the share of weights that disagree for the
float16 model of another training, says no weight was compared for two float32 models, shows
nothing for a true float16 twin; the weight histogram shows the float16 rounding in ulps."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.pair_check import check_pair_files
from tests.helpers.fp16_fixtures import Fp16Fixtures
from tests.helpers.fp16_reference import op_weights, ulp_errors
from tests.helpers.gui_helpers import WAIT_MS, open_wait
from tests.helpers.paths import REPO


@pytest.fixture(scope="module")
def fp16() -> dict[str, Path]:
    return Fp16Fixtures(REPO / ".fixture-cache").models()


def _open_pair(qtbot, win, a, b) -> None:
    open_wait(qtbot, win, "A", a)
    open_wait(qtbot, win, "B", b)
    checker = win.features.pair.checker
    qtbot.waitUntil(lambda: checker.worker is None and checker.check is not None, timeout=WAIT_MS)


def test_float16_of_another_training_warns_with_the_share(qtbot, window, fp16):
    _open_pair(qtbot, window, fp16["fp16_float"], fp16["fp16_other"])
    want = check_pair_files(fp16["fp16_float"], fp16["fp16_other"])
    banner = window.features.pair.pair_banner
    assert banner.isVisible()  # was hidden: 0 weights compared, related
    assert banner.text.startswith("Not a float model and its quantized twin:")
    assert f"{want.disagree_share:.0%} of the paired weights disagree by more than 2 float16 ulps" in banner.text
    assert f"{want.elements_compared:,} weights compared, the furthest {want.max_step_error:.0f} float16 ulps away" in banner.text


def test_no_weight_compared_is_said_and_a_float16_twin_shows_nothing(qtbot, window, fp16):
    _open_pair(qtbot, window, fp16["fp16_float"], fp16["fp16_float"])
    banner = window.features.pair.pair_banner
    assert banner.isVisible()  # was hidden
    # the same float model twice is no pair (issue 34 §2; it read "Pair not verified: No weight compared")
    assert banner.text.startswith("Not a float model and its quantized twin: fp16_float.tflite and fp16_float.tflite "
                                  "are the same model")  # fmt: skip
    assert not window.features.pair.checker.check.related and window.features.pair.checker.check.weights_compared == 0
    open_wait(qtbot, window, "B", fp16["fp16_twin"])
    qtbot.waitUntil(lambda: not banner.isVisible(), timeout=WAIT_MS)
    assert window.features.pair.checker.check.related and window.features.pair.checker.check.float16_weights_compared == 4


def test_weight_histogram_shows_float16_ulps(qtbot, window, fp16):
    _open_pair(qtbot, window, fp16["fp16_float"], fp16["fp16_twin"])
    mb = window.controller.models["B"]
    fc = next(op for op in mb.main.ops if op.type == "FULLY_CONNECTED")
    window.controller.select_op("B", fc.index)
    a, b = next((x, y) for x, y in zip(op_weights(fp16["fp16_float"]), op_weights(fp16["fp16_twin"]), strict=True)
                if x.shape == (4, 16))  # fmt: skip
    u = ulp_errors(a, b)
    text = window.features.weights_view.summary.text()
    assert f"float16 rounding: max {u.max():.3g} ulp, mean {u.mean():.3g} ulp" in text
    rel = np.max(np.abs(b.astype(np.float64) - a) / np.abs(a))
    assert f"max relative error {rel:.3g}" in text
