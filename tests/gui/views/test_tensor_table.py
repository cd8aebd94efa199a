"""Tensor table: columns from core values, filter by name / op type / kind, numeric sort, 10k rows."""

from __future__ import annotations

import time

import numpy as np
from PySide6.QtCore import Qt

from inspector.core.quantmath.quant import tensor_range
from inspector.core.tflite.model import Model, Op, Quantization, Subgraph, Tensor
from inspector.gui.views.tensor_table import COLUMNS, TensorTable
from tests.helpers.gui_helpers import open_wait


def _cell(table: TensorTable, row: int, col: str) -> str:
    return table.proxy.index(row, COLUMNS.index(col)).data()


def test_columns_filter_and_sort(qtbot, window, fixture_path):
    open_wait(qtbot, window, "B", fixture_path("int8"))
    m = Model(fixture_path("int8"))
    sg = m.main
    table = window.panes["B"].tensors
    assert table.visible_tensors() == list(range(len(sg.tensors)))
    conv_w = next(op for op in sg.ops if op.type == "CONV_2D").inputs[1]
    t = sg.tensors[conv_w]
    row = table.visible_tensors().index(conv_w)
    assert _cell(table, row, "Name") == t.name and _cell(table, row, "Dtype") == "int8"
    assert _cell(table, row, "Chan.") == str(len(t.quantization.scales)) == str(t.shape[0])
    lo, hi = tensor_range(t)
    assert _cell(table, row, "Range") == f"[{lo:.6g}, {hi:.6g}]"
    assert _cell(table, row, "Scale") == f"{min(t.quantization.scales):.6g} … {max(t.quantization.scales):.6g}"

    # Filter by name.
    table.filter_edit.setText("conv1")
    shown = table.visible_tensors()
    assert shown and all("conv1" in sg.tensors[i].name.lower() or "conv1" in table.model.ops_text(i) for i in shown)
    assert set(shown) >= {i for i, x in enumerate(sg.tensors) if "conv1" in x.name.lower()}
    # Filter by op type: tensors read or written by a SOFTMAX.
    table.filter_edit.setText("softmax")
    soft = next(op for op in sg.ops if op.type == "SOFTMAX")
    expect = {i for i in (*soft.inputs, *soft.outputs) if i >= 0} | {i for i, x in enumerate(sg.tensors) if "softmax" in x.name.lower()}
    assert set(table.visible_tensors()) == expect
    table.filter_edit.clear()
    # Filter by kind.
    table.kind_combo.setCurrentText("Per-channel")
    assert set(table.visible_tensors()) == {t.index for t in sg.tensors if t.quantization and t.quantization.per_channel}
    table.kind_combo.setCurrentText("Activations")
    assert set(table.visible_tensors()) == {t.index for t in sg.tensors if not t.is_constant}
    table.kind_combo.setCurrentText("All tensors")
    # Numeric sort by scale (not by text): smallest scale first, unquantized last.
    table.view.sortByColumn(COLUMNS.index("Scale"), Qt.SortOrder.AscendingOrder)
    keys = [min(sg.tensors[i].quantization.scales) if sg.tensors[i].quantization else np.inf for i in table.visible_tensors()]
    assert keys == sorted(keys)
    # A selection made elsewhere survives sorting: the controller's tensor stays selected.
    window.controller.select_tensor("B", conv_w)
    assert table.selected_tensor() == conv_w


def _synthetic(n: int) -> Subgraph:
    q = Quantization((0.5,), (3,), 0)
    qc = Quantization(tuple(np.linspace(0.01, 0.1, 8)), (0,) * 8, 0)
    tensors = tuple(
        Tensor(0, i, f"layer{i // 3}/t{i}", "int8", (8, 4), (8, 4), 0, 0, False, q if i % 2 else qc) for i in range(n)
    )
    ops = tuple(Op(0, k, "CONV_2D" if k % 2 else "ADD", False, 1, (3 * k, 3 * k + 1), (3 * k + 2,), (), {}) for k in range(n // 3))
    return Subgraph(0, "main", (0,), (n - 1,), tensors, ops)


def test_ten_thousand_tensors_stay_fast(qtbot):
    table = TensorTable()
    qtbot.addWidget(table)
    table.resize(800, 600)
    table.show()
    sg = _synthetic(10_000)
    t0 = time.perf_counter()
    table.set_subgraph(sg)
    qtbot.wait(1)
    t_open = time.perf_counter() - t0
    assert table.proxy.rowCount() == 10_000
    t0 = time.perf_counter()
    table.filter_edit.setText("layer12")  # layer12/, layer120..129/, layer1200..
    t_filter = time.perf_counter() - t0
    shown = table.visible_tensors()
    assert len(shown) == sum(1 for t in sg.tensors if "layer12" in t.name)
    table.filter_edit.clear()
    t0 = time.perf_counter()
    table.view.sortByColumn(COLUMNS.index("Scale"), Qt.SortOrder.DescendingOrder)
    t_sort = time.perf_counter() - t0
    order = table.visible_tensors()
    scales = [min(sg.tensors[i].quantization.scales) for i in order]
    assert scales == sorted(scales, reverse=True) and sorted(order) == list(range(10_000))
    print(f"10k tensors: open {t_open * 1000:.0f} ms, filter {t_filter * 1000:.0f} ms, sort {t_sort * 1000:.0f} ms")
    assert t_open < 1.0 and t_filter < 1.0 and t_sort < 1.0  # generous: 2 shared cores; typical is ~10x less
