"""The plan editor is a view of the window's `AppState.requantize.draft` (issue 27): the table is
rendered from the draft, and each widget edit is a call to it."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.requantize.draft import DraftRow
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from tests.helpers.gui_helpers import open_wait


def _open(qtbot, window, example_pair):
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    return window.features.requantize_panel.editor, window.controller.state.requantize.draft


def test_the_table_is_rendered_from_the_window_draft(qtbot, window, example_pair):
    ed, draft = _open(qtbot, window, example_pair)
    assert ed.draft is draft and window.features.requantize.flow is window.controller.state.requantize
    draft.add([0, 5], "B", "recal_mse")  # B's input QUANTIZE (not in A) and B's conv, A's op 4
    assert ed.table.rowCount() == 2
    assert [ed.table.item(r, 0).text() for r in range(2)] == ["0", "5"]
    assert "not in A" in ed.table.item(0, 1).text() and "A: op 4" in ed.table.item(1, 1).text()
    assert [ed.table.cellWidget(r, 3).currentData() for r in range(2)] == ["recal_mse", "recal_mse"]
    assert ed.table.item(1, 0).data(Qt.ItemDataRole.UserRole) is None  # no row identity kept in the widgets
    draft.set_route("quantizer")  # the core edit moves the widgets
    assert ed.route.currentData() == "quantizer" and ed.table.cellWidget(1, 3).currentData() == "keep_float"
    assert not ed.table.isColumnHidden(4) and ed.table.cellWidget(1, 4).isEnabled() is False  # keep float: no algorithm
    draft.remove([0])
    assert ed.table.rowCount() == 1 and ed.table.item(0, 0).text() == "5"


def test_widget_edits_go_to_the_draft(qtbot, window, example_pair):
    ed, draft = _open(qtbot, window, example_pair)
    ed.ops_edit.setText("0, 3")
    ed._add_typed()
    assert draft.rows == (DraftRow(None, 0, "keep_float"), DraftRow(2, 3, "keep_float")) and ed.ops_edit.text() == ""
    ed.table.cellWidget(1, 3).setCurrentIndex(ed.table.cellWidget(1, 3).findData("per_channel"))  # the user picks an edit
    assert draft.rows[1].choice == "per_channel"
    ed.route.setCurrentIndex(ed.route.findData("quantizer"))
    assert draft.route == "quantizer" and draft.rows[1].choice == "keep_float"
    ed.table.cellWidget(1, 3).setCurrentIndex(ed.table.cellWidget(1, 3).findData("int8_tensor"))
    algo = ed.table.cellWidget(1, 4)
    assert algo.isEnabled()
    algo.setCurrentIndex(algo.findData("mse"))
    ed.base.setCurrentIndex(ed.base.findData("a16w8"))
    ed.per_channel.setChecked(False)
    assert draft.rows[1] == DraftRow(2, 3, "int8_tensor", "mse") and (draft.base, draft.per_channel) == ("a16w8", False)
    ed.table.selectRow(0)
    ed.remove_selected()
    assert draft.rows == (DraftRow(2, 3, "int8_tensor", "mse"),)
    plan = ed.plan()
    assert plan.base == "a16w8" and [(o.selector, o.treatment, o.per_channel, o.algorithm) for o in plan.overrides] == \
        [("op:2", "int8", False, "mse")]


def test_applying_a_treatment_to_selected_rows_keeps_their_algorithm(qtbot, window, example_pair):
    """The old editor reset each selected row's algorithm to "as base" when a treatment was
    applied to the selection; the row's algorithm is its own column."""
    ed, draft = _open(qtbot, window, example_pair)
    ed.set_route("quantizer")
    ed.add_layers([1, 2], "int8_channel", "mse")
    ed.table.selectRow(0)
    ed.new_choice.setCurrentIndex(ed.new_choice.findData("int8_tensor"))
    ed.new_choice.activated.emit(ed.new_choice.currentIndex())
    assert draft.rows == (DraftRow(1, 2, "int8_tensor", "mse"), DraftRow(2, 3, "int8_channel", "mse"))
    assert ed.table.cellWidget(0, 4).currentData() == "mse"


def test_the_surgical_plan_of_quantizer_rows_takes_the_closest_edits(qtbot, window, example_pair):
    """`surgical_plan()` on the quantizer route looked treatment keys up among B's edits (KeyError
    for 'int8_tensor'); the draft maps each to the closest edit, as a route switch does."""
    ed, _draft = _open(qtbot, window, example_pair)
    ed.set_route("quantizer")
    ed.add_layers([1, 4], "int8_tensor")
    ed.set_row_choice(1, "a16w8")
    assert ed.surgical_plan() == SurgicalPlan((Edit("keep_float", "op:2", None, (2,)), Edit("a16w8", "op:5", None, (5,))))


def test_the_flow_reaches_qt_only_through_the_relay_and_holds_the_suggestion(qtbot, window, example_pair):
    from pathlib import Path

    import inspector.gui as gui_pkg
    from inspector.core.requantize.plan import Plan
    from inspector.core.requantize.suggest import SuggestResult, TradeoffPoint

    _open(qtbot, window, example_pair)
    flow, rq = window.controller.state.requantize, window.features.requantize
    gui = Path(gui_pkg.__file__).resolve().parent
    for name in ("draft_changed", "suggestion_changed", "pending_changed"):
        for fn in getattr(flow, name)._subscribers:
            where = Path(fn.__code__.co_filename).resolve()
            assert not where.is_relative_to(gui) or where.name == "relay.py", (name, fn.__qualname__)
    assert len(flow.draft_changed._subscribers) >= 1 and len(flow.suggestion_changed._subscribers) >= 1
    size = rq.versions[0].size_bytes
    result = SuggestResult(33.0, None, "keep_float", "int8", True, [], Plan(base="int8"),
                           [TradeoffPoint("given", (), size, 30.0)])
    with qtbot.waitSignal(rq.suggestion_changed) as blocker:
        rq._suggested(result, "/nonexistent/suggested.tflite")
    assert blocker.args == [result] and flow.suggestion.result is result and rq.suggestion is result
    assert flow.suggestion.path is None  # no best model: nothing to apply


def test_run_and_suggest_say_why_they_cannot_start(qtbot, window, example_pair):
    """Without both models, or while a run goes, Run and Suggest start nothing and say why."""
    rq = window.features.requantize
    said: list[str] = []
    rq.failed.connect(said.append)
    plan = SurgicalPlan((Edit("keep_float", (3,)),))
    assert rq.run(plan) is None and rq.suggest(30.0, None) is None
    assert said == ["Open the float model (A) and its quantized twin (B) first."] * 2
    _open(qtbot, window, example_pair)

    class Going:
        is_done = False

    rq.worker = Going()  # a run still going
    said.clear()
    assert rq.run(plan) is None and rq.suggest(30.0, None) is None
    assert said == ["A requantize or suggest run is already going; wait or cancel it."] * 2
    rq.worker = None
