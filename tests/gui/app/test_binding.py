"""Widgets bound to the state's options (gui.binding): an edit sets that one field of AppState
once, the state's event shows a change in the widget, and neither bounces back (no echo)."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QComboBox

from inspector.core.samples.settings import ALL, SampleSettings
from inspector.core.state.app_state import AppState
from inspector.gui.binding import quietly
from inspector.gui.compare.inputs_panel import InputsPanel
from inspector.gui.relay import relay


class Options(QObject):
    """An `OptionsModel` over a real AppState that counts the setter's calls."""

    options_changed = Signal(object)

    def __init__(self, state: AppState) -> None:
        super().__init__()
        self.state, self.sets = state, []
        relay(state.options_changed, self.options_changed, self)

    def option(self, name):
        return self.state.option(name)

    def set_option(self, name, value):
        self.sets.append((name, value))
        self.state.set_option(name, value)


def _bound(qtbot):
    state = AppState()
    model = Options(state)
    panel = InputsPanel()
    qtbot.addWidget(panel)
    panel.bind(model)
    events, toggles, edits = [], [], []
    state.options_changed.connect(events.append)
    panel.isolated.toggled.connect(toggles.append)
    panel.field_edited.connect(lambda n, v: edits.append((n, v)))
    return state, model, panel, events, toggles, edits


def test_an_edit_sets_one_field_once_without_echo(qtbot):
    state, model, panel, events, toggles, edits = _bound(qtbot)
    assert panel.isolated.isChecked() is state.options.isolated is True  # bound: shows the state
    before = state.options
    panel.isolated.setChecked(False)  # the user's click
    assert state.options.isolated is False
    assert state.options.samples == before.samples and state.options.runtime == before.runtime
    assert model.sets == [("isolated", False)]  # one call of the one setter
    assert len(events) == 1  # one event
    assert toggles == [False]  # the event did not write the check box back
    assert edits == [("isolated", False)]


def test_a_state_change_shows_without_echo(qtbot):
    state, model, panel, events, toggles, edits = _bound(qtbot)
    state.set_option("isolated", False)
    state.set_option("seed", 7)
    state.set_option("count", ALL)
    assert not panel.isolated.isChecked() and panel.seed.value() == 7 and panel.count.value() == 0
    assert model.sets == []  # showing the state's value never set it again
    assert len(events) == 3 and toggles == [False] and edits == []
    state.set_option("seed", 7)  # the same value: no event, nothing shown again
    assert len(events) == 3


def test_a_typed_path_is_committed_before_use(qtbot, tmp_path):
    state, model, panel, events, *_ = _bound(qtbot)
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(tmp_path / "x.npz"))  # typed, no Enter yet: the state does not hold it
    assert state.options.samples.source is None
    panel.commit()
    assert state.options.samples.source == str(tmp_path / "x.npz")
    assert model.sets == [("source", str(tmp_path / "x.npz"))]


def test_quietly_silences_and_restores(qtbot):
    combo = QComboBox()
    qtbot.addWidget(combo)
    seen = []
    combo.currentIndexChanged.connect(seen.append)
    with quietly(combo):
        combo.addItems(["a", "b"])
        combo.setCurrentIndex(1)
        with quietly(combo):  # nested: still silent after the inner block
            pass
        combo.setCurrentIndex(0)
    assert seen == [] and not combo.signalsBlocked()
    combo.setCurrentIndex(1)
    assert seen == [1]


def test_the_window_binds_the_own_error_option_to_the_state(qtbot, window):
    """The own-error check box of the comparison's inputs is the state's `isolated` option: a
    click sets it once through the one setter, a state change (a session, the example) shows in
    the check box, and neither comes back (no echo)."""
    state, box = window.state, window.features.compare_features.inputs.isolated
    events, toggles, sets = [], [], []
    state.options_changed.connect(events.append)
    box.toggled.connect(toggles.append)
    real_set = state.set_option
    state.set_option = lambda name, value: (sets.append((name, value)), real_set(name, value))[1]
    assert box.isChecked() is state.options.isolated is True
    box.click()
    assert state.options.isolated is False and sets == [("isolated", False)] and len(events) == 1 and toggles == [False]
    state.set_options(dataclasses.replace(state.options, isolated=True, samples=SampleSettings(count=3)))
    assert box.isChecked() and window.features.compare_features.inputs.count.value() == 3
    assert sets == [("isolated", False)] and len(events) == 2 and toggles == [False, True]


def test_the_plan_editor_binds_the_drafts_options(qtbot):
    """The quantizer route's options are the plan draft's (a core state object): an edit sets the
    draft once, a change of the draft shows in the widgets, without echo."""
    from inspector.core.requantize.draft import PlanDraft
    from inspector.gui.requantize.plan_editor import PlanEditor

    draft = PlanDraft()
    editor = PlanEditor(draft=draft)
    qtbot.addWidget(editor)
    changes, toggles = [], []
    draft.changed.connect(lambda: changes.append((draft.per_channel, draft.algorithm)))
    editor.per_channel.toggled.connect(toggles.append)
    assert editor.per_channel.isChecked() is draft.per_channel is True
    editor.per_channel.click()
    assert draft.per_channel is False and changes == [(False, "min_max")] and toggles == [False]
    draft.set_options(algorithm="mse", per_channel=True)
    assert editor.algorithm.currentData() == "mse" and editor.per_channel.isChecked()
    assert changes == [(False, "min_max"), (True, "mse")] and toggles == [False, True]
