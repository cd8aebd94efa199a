"""Opening another pair after a comparison: the run status under "Run comparison" still read
"Done: 13 layers, 8 samples … from example_inputs.npz" over the new pair's empty plot."""

from __future__ import annotations

from tests.helpers.gui_helpers import click_enabled, open_wait

RUN_MS = 120_000


def test_done_status_goes_with_its_result(qtbot, window, example_pair, fixture_path):
    status = window.features.compare_features.inputs.status
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS, check_params_cb=lambda r: r is not None):
        click_enabled(qtbot, window.features.compare_features.inputs.run_button)
    assert status.text().startswith("Done: ")
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    qtbot.wait(50)
    assert window.features.compare.result is None
    assert not status.text().startswith("Done: "), status.text()
