"""Issue 33 §4 in the window: the bundled example opens compared with its one root cause (op 1,
the input's range) in a strip above the output summary, with an Apply fix button; Apply fix runs
the fix and reports the held-out accuracy before and after (measured by blame, checked against
numpy in tests/core/requantize/test_blame.py). Screenshots at 1280x800 and 1920x1080 go to the test's tmp dir."""

from __future__ import annotations

import os

from inspector.gui.example.feature import AUTORUN_KEY

RUN_MS = 120_000


def test_the_root_cause_leads_with_apply_fix(qtbot, window, tmp_path):
    window.settings.setValue(AUTORUN_KEY, True)
    act = next(a for a in window.ui.menu("File").actions() if a.text().replace("&", "") == "Open the example pair")
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None):
        act.trigger()
    strip = window.features.diagnosis_features.strip
    qtbot.waitUntil(lambda: strip.root is not None, timeout=5000)
    assert strip.root.op_index == 1 and strip.root.fix.ops == (1,)
    text = strip.label.text()
    assert "op 1 RESHAPE, input range clipped" in text and "re-calibrate op 1" in text
    assert strip.isVisible() and strip.button.isVisible() and strip.button.isEnabled()
    # above the output summary: the root cause first
    summary = window.features.compare_features.summary
    assert strip.mapTo(window, strip.rect().topLeft()).y() < summary.mapTo(window, summary.rect().topLeft()).y()
    shots = os.environ.get("INSPECTOR_SHOTS", str(tmp_path))
    for w, h in ((1280, 800), (1920, 1080)):
        window.resize(w, h)
        qtbot.wait(50)
        assert window.grab().save(os.path.join(shots, f"root_cause_{w}x{h}.png"))
    with qtbot.waitSignal(window.features.diagnosis_features.rq.finished, timeout=RUN_MS):
        strip.button.click()
    qtbot.waitUntil(lambda: bool(window.features.diagnosis_features.outcome), timeout=RUN_MS)
    assert window.features.diagnosis_features.outcome[0].startswith("held-out accuracy 93.8 → 98.4 %")
