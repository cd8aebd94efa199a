"""Issue 35, item 9: selecting a RESHAPE selected its constant input (the shape vector) and the
Weights tab drew a "histogram" of four integers. Its output (an activation) is selected on both
sides, and the Weights tab says the op has no weights and what its constant is; a layer with
weights still shows them."""

from __future__ import annotations

from tests.helpers.gui_helpers import open_wait


def test_selecting_a_reshape_selects_its_output_and_says_it_has_no_weights(qtbot, window, example_pair):
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    c, view = window.controller, window.features.weights_view
    b = c.models["B"].main
    reshape = next(o for o in b.ops if o.type == "RESHAPE")
    c.select_op("B", reshape.index)
    assert c.selection.tensor("B") == reshape.outputs[0]
    a_op = c.selection.op("A")
    assert a_op is not None and c.selection.tensor("A") == c.models["A"].main.ops[a_op].outputs[0]
    qtbot.waitUntil(lambda: "has no weights" in view.summary.text(), timeout=5000)
    assert view.analysis is None and f"op {reshape.index} RESHAPE" in view.summary.text()
    assert "a shape operand (the shape of the output), not weights" in view.summary.text()
    assert view.empty_text.textItem.toPlainText().endswith("has no weights")
    conv = next(o for o in b.ops if o.type == "CONV_2D")  # a layer with weights: its histogram again
    c.select_op("B", conv.index)
    qtbot.waitUntil(lambda: view.analysis is not None, timeout=5000)
    assert view.analysis.b.name == b.tensors[conv.inputs[1]].name and "has no weights" not in view.summary.text()
