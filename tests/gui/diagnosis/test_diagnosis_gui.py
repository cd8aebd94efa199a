"""The diagnosis in the GUI: the Cause column and the plot's tooltip after a comparison of a twin
with a planted clipping layer; "Apply fix" queues the edit in the Requantize tab, runs it and
shows the before/after (checked against an independent `compare_models` run of the new model
B); "Extract as repro…" writes the folder (the single-op model read with the `tflite` package).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models

RUN_MS = 120_000


def test_cause_column_and_plot_tooltip(qtbot, diagnosed):
    from inspector.gui.views.model_pane import CAUSE_COLUMN, OP_COLUMNS

    win, _f, _q, op, _o, result = diagnosed
    assert OP_COLUMNS[CAUSE_COLUMN] == "Cause"
    model = win.panes["B"].ops
    idx = model.index(op, CAUSE_COLUMN)
    assert model.data(idx) == "clipping"
    tip = model.data(idx, role=0x03)  # ToolTipRole
    assert tip.startswith("clipping: ") and f"fix: re-calibrate op {op}" in tip
    down = next(lay for lay in result.layers if lay.op_index > op and lay.diagnosis.cause == "inherited")
    assert model.data(model.index(down.op_index, CAUSE_COLUMN)) == f"← op {op}"
    plot = win.features.compare_features.plot
    i = next(k for k, lay in enumerate(result.layers) if lay.op_index == op)
    name = next(iter(plot.series))  # the current result's series
    text = plot._tip(0, 0, (name, i, result))
    assert "cause: clipping" in text and f"fix: re-calibrate op {op}" in text


def test_apply_fix_runs_the_edit_and_shows_before_after(qtbot, diagnosed):
    win, f, q, op, opts, before = diagnosed
    feats = win.features.diagnosis_features
    with qtbot.waitSignal(win.features.requantize.finished, timeout=RUN_MS) as blocker:
        assert feats.apply_fix(op) is not None
    v = blocker.args[0]
    ed = win.features.requantize_panel.editor
    assert ed.current_route() == "surgical" and ed.table.rowCount() == 1  # the fix was queued in the plan
    assert [(e.kind, e.ops) for e in ed.plan().edits] == [("recalibrate", (op,))]
    assert v.kind == "edited" and v.edited_ops == (op,)
    line = feats.outcome[0]
    m = re.match(rf"op {op} CONV_2D: SQNR ([\d.]+) → ([\d.]+) dB", line)
    assert m, line
    b_db, a_db = float(m.group(1)), float(m.group(2))
    assert a_db >= b_db + 6.0 and "cause now: none" in line
    assert "SQNR" in ed.status.text() and "→" in ed.status.text()
    first = ed.status.text().splitlines()[0]  # the key figures first: the label keeps two lines, the status bar one
    assert first.startswith(f"Applied the fix (re-calibrate op {op}): output SQNR ") and first.endswith(f"now model B: {v.name}")
    independent = compare_models(f, v.path, CompareOptions(samples=opts.samples, isolated=True))
    lay = next(lay for lay in independent.layers if lay.op_index == op)
    assert lay.metrics.sqnr_db == pytest.approx(a_db, abs=0.01)
    assert next(x for x in before.layers if x.op_index == op).metrics.sqnr_db == pytest.approx(b_db, abs=0.01)


def test_extract_as_repro_from_a_layer(qtbot, diagnosed, tmp_path):
    win, _f, q, op, _o, _r = diagnosed
    feats = win.features.diagnosis_features
    win.panes["B"].op_view.selectRow(op)
    feats._context_menu("B", win.panes["B"].op_view, win.panes["B"].op_view.visualRect(win.panes["B"].ops.index(op, 0)).center())
    texts = [a.text() for a in feats.menu.actions()]
    assert f"Apply fix: re-calibrate op {op}" in texts and "Extract as repro…" in texts
    feats.menu.close()
    out = tmp_path / "repro"
    w = feats.extract(op, str(out))
    with qtbot.waitSignal(w.done, timeout=RUN_MS):
        pass
    assert {p.name for p in out.iterdir()} >= {"model.tflite", "inputs.npz", "expected.npz", "run.py"}
    m = tflite.Model.GetRootAsModel((out / "model.tflite").read_bytes(), 0)
    assert m.Subgraphs(0).OperatorsLength() == 1
    assert "bit-exact" in win.statusBar().currentMessage()
    exp = dict(np.load(out / "expected.npz"))
    assert any(k.startswith("float:") for k in exp)  # model A is open: the float op's output too
    assert Path(q).exists()


def test_runtime_parity_turns_a_layer_into_a_kernel_cause(qtbot, diagnosed):
    from inspector.core.compare.parity_result import Difference, LayerParity, RuntimeParityResult
    from inspector.gui.views.model_pane import CAUSE_COLUMN

    win, _f, q, _op, _o, result = diagnosed
    lay = next(x for x in result.layers if x.op_type == "DEPTHWISE_CONV_2D")
    model = win.panes["B"].ops
    assert model.data(model.index(lay.op_index, CAUSE_COLUMN)) != "kernel"
    parity = RuntimeParityResult(str(q), ("reference", "optimized"), (1, 1), 4,
                                 (LayerParity(lay.op_index, lay.op_type, lay.tensor_name, lay.quant_tensor, 0.3, 6.0, True,
                                              {"optimized": Difference(0.3, 6.0)}),), (), subgraph=0)  # fmt: skip
    win.features.parity.controller.set_result(parity)
    assert model.data(model.index(lay.op_index, CAUSE_COLUMN)) == "kernel"
    assert "6 LSB" in model.data(model.index(lay.op_index, CAUSE_COLUMN), role=0x03)
    win.features.parity.controller.set_result(None)
    assert model.data(model.index(lay.op_index, CAUSE_COLUMN)) != "kernel"  # parity cleared: the comparison's own
