"""The own (isolated) error in the window: on by default, and toggling it once a result is shown
says whether that result still matches and that a run is needed when it does not."""

from __future__ import annotations

from tests.helpers.gui_helpers import click_enabled, open_wait, use_random_samples

RUN_MS = 60_000


def _run(qtbot, window):
    panel = window.features.compare_features.inputs
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def test_the_own_error_is_on_by_default_and_a_toggle_says_when_to_run_again(qtbot, window, example_pair):
    panel = window.features.compare_features.inputs
    assert panel.isolated.isChecked() and window.state.options.isolated
    assert "own (isolated) error" in panel.isolated.text()
    panel.isolated.setChecked(False)
    assert panel.status.text() == "Not run yet."  # no result yet: nothing to say
    panel.isolated.setChecked(True)
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    use_random_samples(window)
    panel.count.setValue(2)
    result = _run(qtbot, window)
    assert result.isolated and any(lay.isolated is not None for lay in result.layers)
    assert window.features.compare_features.act_isolated.isEnabled()
    panel.isolated.setChecked(False)
    assert not window.state.options.isolated
    assert panel.status.text().startswith("Own (isolated) error off: the next run leaves it out")
    panel.isolated.setChecked(True)
    assert panel.status.text() == "The result shown matches this setting again."
    panel.isolated.setChecked(False)
    plain = _run(qtbot, window)
    assert not plain.isolated and all(lay.isolated is None for lay in plain.layers)
    panel.isolated.setChecked(True)
    assert panel.status.text().startswith("Own (isolated) error on: run the comparison again to compute it")
