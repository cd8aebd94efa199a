"""Apply fix and Suggest say when they would calibrate on noise (issue 26 §9): with random samples
(no inputs chosen) they ask first, offering to choose inputs; "Cancel" runs nothing, "Choose
inputs…" opens the inputs chooser and runs nothing, "Use random samples" runs; with inputs
chosen they do not ask. The box itself is answered by the `random_calibration_asks` fixture."""

from __future__ import annotations

import numpy as np

from inspector.core.compare.diagnosis_types import Fix
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.tflite.model import load_model
from tests.helpers import verdict_fixtures as vf
from tests.helpers.gui_helpers import open_wait, use_random_samples
from tests.helpers.paths import REPO

RUN_MS = 120_000


def _open(qtbot, window):
    paths = vf.confident(REPO / ".fixture-cache")
    fa, fb = str(paths["conf_float"]), str(paths["conf_int8"])
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    op = next(o.index for o in load_model(fb).main.ops if o.type == "FULLY_CONNECTED" and o.index > 1)
    return op


def test_apply_fix_and_suggest_ask_before_calibrating_on_random_samples(qtbot, window, random_calibration_asks, monkeypatch):
    asks = random_calibration_asks
    op = _open(qtbot, window)
    use_random_samples(window)
    window.features.compare_features.inputs.count.setValue(4)
    rq = window.features.requantize
    plan = fix_plan(Fix("recalibrate", (op,)))
    asks.answer = "cancel"
    assert rq.run(plan) is None and len(rq.versions) == 1
    assert len(asks.texts) == 1 and "4 random samples" in asks.texts[0] and "Choose inputs" in asks.texts[0]
    chosen = []
    monkeypatch.setattr(window.features.compare_features.inputs, "choose_path", lambda: chosen.append(True))
    asks.answer = "choose"
    assert rq.suggest(80.0, 1) is None and chosen == [True] and not rq.running
    assert window.features.compare_features.inputs.source.currentData() == "file"
    assert len(asks.texts) == 2 and asks.texts[1].startswith("Suggest")
    use_random_samples(window)
    asks.answer = "random"
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS):
        assert rq.run(plan) is not None
    assert len(asks.texts) == 3
    qtbot.waitUntil(lambda: len(rq.versions) == 2, timeout=RUN_MS)


def test_with_inputs_chosen_nothing_is_asked(qtbot, window, random_calibration_asks, tmp_path):
    op = _open(qtbot, window)
    npz = tmp_path / "cal.npz"
    np.savez(npz, features=vf.inputs(8, 0))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(npz))
    panel.path.editingFinished.emit()
    assert window.controller.state.samples.source == str(npz)
    rq = window.features.requantize
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS):
        assert rq.run(fix_plan(Fix("recalibrate", (op,)))) is not None
    assert random_calibration_asks.texts == []
