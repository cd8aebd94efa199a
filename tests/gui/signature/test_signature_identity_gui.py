"""One layer identity with its subgraph in the GUI (issue 18 §1): on the prefill signature
(subgraph 1 of the two-signature pair) the Op math tab explains prefill's op under the index the
panes show, with the comparison's values on prefill's tensors; an audit finding in another
subgraph than the one shown switches to the signature that opens it and selects its op.

References: op types parsed with the `tflite` package alone (tests/core/review/test_signature_identity)
and core's `op_math` on a `for_signature` view."""

from __future__ import annotations

import html

import pytest

from inspector.core.quantmath.opmath import op_math
from inspector.core.review.audit import Finding
from inspector.core.tflite.model import Model
from tests.core.review.test_signature_identity import independent_subgraph
from tests.helpers.gui_helpers import choose_signature, click_enabled

RUN_MS = 60_000


def _click_op(win, slot: str, op: int) -> None:
    view = win.panes[slot].op_view
    sm = view.selectionModel()
    sm.setCurrentIndex(win.panes[slot].ops.index(op, 0), sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)


def test_op_math_tab_explains_the_signatures_op(qtbot, sig_window, sig_pair):
    win = sig_window
    fb = sig_pair[1]
    si, _, ops = independent_subgraph(fb, "prefill")
    choose_signature(qtbot, win, "prefill")
    fc = next(i for i, (t, _, _) in enumerate(ops) if t == "FULLY_CONNECTED")
    _click_op(win, "B", fc)
    panel = win.features.opmath.op_math_panel
    assert (panel.math.subgraph, panel.math.op_index, panel.math.op_type) == (si, fc, ops[fc][0])
    assert panel.math == op_math(Model(fb).for_signature("prefill"), fc)
    assert "signature 'prefill' (subgraph 1)" in html.unescape(panel.header.text())

    # After a comparison of prefill, the tab shows prefill's SQNR on prefill's output tensor.
    inputs = win.features.compare_features.inputs
    inputs.source.setCurrentIndex(inputs.source.findData("random"))
    inputs.count.setValue(2)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, inputs.run_button)
    result = blocker.args[0]
    assert result.signature == "prefill"
    lay = next(x for x in result.layers if x.op_index == fc)
    _click_op(win, "B", fc)
    out = next(t for t in win.features.opmath.op_math_panel.math.tensors if t.index == lay.quant_tensor)
    assert out.index in ops[fc][2]
    assert out.observed["sqnr_db"] == pytest.approx(lay.metrics.sqnr_db)


def test_audit_finding_of_another_subgraph_is_selectable(qtbot, sig_window, sig_pair):
    win = sig_window
    fb = sig_pair[1]
    si, _, ops = independent_subgraph(fb, "prefill")
    assert win.panes["B"].ops.subgraph.index == 0  # decode shown
    fc = next(i for i, (t, _, _) in enumerate(ops) if t == "FULLY_CONNECTED")
    weight = ops[fc][1][1]
    finding = Finding("info", "hybrid-op", fc, "FULLY_CONNECTED", weight, "w", "test finding in prefill", subgraph=si)
    audit = win.features.review.audit_view
    audit.set_findings([finding], "sig_int8.tflite")
    with qtbot.waitSignal(win.controller.signature_changed, timeout=5000):
        audit.select_row(0)
    assert win.state.options.signature == "prefill"
    assert win.panes["B"].ops.subgraph.index == si
    assert win.controller.selection.op("B") == fc
    assert win.controller.selection.tensor("B") == weight
    math = win.features.opmath.op_math_panel.math
    assert (math.subgraph, math.op_index, math.op_type) == (si, fc, "FULLY_CONNECTED")
    assert "signature 'prefill' (subgraph 1)" in win.statusBar().currentMessage()

    # A finding of the subgraph shown selects in place (no signature change).
    audit.set_findings([Finding("info", "x", 0, ops[0][0], None, None, "m", subgraph=si)], "sig_int8.tflite")
    audit.select_row(0)
    assert win.state.options.signature == "prefill" and win.controller.selection.op("B") == 0

    # With prefill shown, a decode finding names its signature and subgraph in the Op column.
    decode = Finding("warning", "low-range-use", 3, "FULLY_CONNECTED", None, None, "m", subgraph=0)
    audit.set_findings([decode], "sig_int8.tflite")
    assert audit.model.text(decode, 1) == "3 FULLY_CONNECTED (signature 'decode', subgraph 0)"
    assert audit.model.text(Finding("info", "x", 0, ops[0][0], None, None, "m", subgraph=si), 1) == f"0 {ops[0][0]}"
