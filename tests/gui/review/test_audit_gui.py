"""Audit tab: planted violations listed with the right op and tensor, selecting one selects that
op everywhere, sorting and filtering, re-audit when model B or the comparison changes."""

from __future__ import annotations

from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.review.audit import audit_model
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.audit_fixtures import planted
from tests.helpers.gui_helpers import open_wait

RULES = {"weight_zero_point": "weight-zero-point", "bias_scale": "bias-scale",
         "softmax_output_scale": "fixed-output", "weight_minus_128": "weight-range"}  # fmt: skip


def _planted_pair(qtbot, window, fixture_path, tmp_path):
    data, info = planted(fixture_path("int8"))
    path = tmp_path / "planted.tflite"
    path.write_bytes(data)
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", path)
    return path, info


def test_planted_violations_listed_and_selectable(qtbot, window, fixture_path, tmp_path):
    path, info = _planted_pair(qtbot, window, fixture_path, tmp_path)
    view = window.features.review.audit_view
    model = Model(path)
    expected = audit_model(model)
    assert view.model.findings == expected  # exactly what core finds, nothing dropped
    errors = [f for f in view.visible_findings() if f.severity == "error"]
    assert {(f.rule, f.op_index, f.tensor_index) for f in errors} == {
        (RULES[n], i["op_index"], i["tensor_index"]) for n, i in info.items()}  # fmt: skip
    assert "4</b> errors" in view.summary.text()
    # Each row shows its op as "index TYPE" and the tensor name.
    for f in errors:
        row = view.visible_findings().index(f)
        idx = view.proxy.index(row, 1)
        assert view.proxy.data(idx) == f"{f.op_index} {model.main.ops[f.op_index].type}"
        assert view.proxy.data(view.proxy.index(row, 2)) == model.main.tensors[f.tensor_index].name
    # Selecting a finding selects its op and tensor in B, and the counterpart op in A.
    window.tabs.setCurrentWidget(view)
    for name in ("weight_minus_128", "softmax_output_scale", "bias_scale"):
        want = info[name]
        row = next(r for r, f in enumerate(view.visible_findings()) if f.rule == RULES[name])
        view.select_row(row)
        sel = window.controller.selection
        assert (sel.op_b, sel.tensor_b) == (want["op_index"], want["tensor_index"])
        assert window.panes["B"].selected_op() == want["op_index"]
        assert window.panes["B"].tensors.selected_tensor() == want["tensor_index"]
        assert window.panes["A"].selected_op() == window.controller.counterpart_op("B", want["op_index"])
        assert window.features.opmath.op_math_panel.math.op_index == want["op_index"]


def test_sort_and_filter(qtbot, window, fixture_path, tmp_path):
    _planted_pair(qtbot, window, fixture_path, tmp_path)
    view = window.features.review.audit_view
    everything = view.visible_findings()
    assert len(everything) == len(view.model.findings) > 4
    view.view.sortByColumn(0, Qt.SortOrder.DescendingOrder)  # severity: errors first
    sev = [f.severity for f in view.visible_findings()]
    assert sev == sorted(sev, key=["error", "warning", "info"].index)
    view.view.sortByColumn(1, Qt.SortOrder.AscendingOrder)  # op index numerically (10 after 9)
    ops = [f.op_index for f in view.visible_findings() if f.op_index is not None]
    assert ops == sorted(ops)
    view.checks["info"].setChecked(False)
    view.checks["warning"].setChecked(False)
    assert {f.severity for f in view.visible_findings()} == {"error"}
    view.search.setText("softmax")
    (f,) = view.visible_findings()
    assert f.rule == "fixed-output"
    view.search.setText("")
    for cb in view.checks.values():
        cb.setChecked(True)
    assert len(view.visible_findings()) == len(everything)


def test_reaudit_on_model_and_comparison_change(qtbot, window, fixture_path, tmp_path):
    _planted_pair(qtbot, window, fixture_path, tmp_path)
    view = window.features.review.audit_view
    assert any(f.severity == "error" for f in view.model.findings)
    # A clean converter-built model B: no errors, no warnings.
    fp, qp = fixture_path("float"), fixture_path("int8")
    with qtbot.waitSignal(window.features.review.audit_updated, timeout=20_000):
        open_wait(qtbot, window, "B", qp)
    assert view.model.findings == audit_model(Model(qp))
    assert not [f for f in view.model.findings if f.severity in ("error", "warning")]
    assert "no rule violations" in view.summary.text()
    # After a comparison: range-use / clipping findings use the observed ranges.
    result = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))
    with qtbot.waitSignal(window.features.review.audit_updated, timeout=20_000):
        window.features.compare_features.source.set_result(result)
    assert view.model.findings == audit_model(Model(qp), result)
    assert "observed in the comparison" in view.summary.text()
    # Closing model B empties the audit.
    window.controller.close_model("B")
    assert view.model.findings == [] and "Open a quantized model" in view.summary.text()
