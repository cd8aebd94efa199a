"""Requantize tab, surgical route (the default): select the worst layer of the fixture CNN's model B,
keep it float, run -> the new B differs from the opened one only at that op (flatbuffers diffed
with the `tflite` package), its output SQNR is not lower (independent compare_models runs), and
the delta table marks exactly that op as edited. Also: other edits from the editor, the plan
saved from the tab reproduces the bytes, and surgical Suggest with its trade-off plot."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.requantize.delta import output_sqnr_db
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import load_plan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from inspector.gui.turns import queue
from tests.helpers.gui_helpers import click_enabled, open_wait, use_random_samples
from tests.helpers.paths import REPO
from tests.helpers.surgical_helpers import assert_untouched, describe, edited_names
from tests.helpers.task_fixtures import TaskFixtures

RUN_MS = 120_000
SAMPLES, SEED = 4, 3
SKIP = ("QUANTIZE", "DEQUANTIZE")


def _compare(qtbot, win):
    panel = win.features.compare_features.inputs
    panel.count.setValue(SAMPLES)
    panel.seed.setValue(SEED)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def _opts() -> CompareOptions:
    return CompareOptions(samples=SampleSettings(count=SAMPLES, seed=SEED))


@pytest.fixture
def kept(qtbot, window, cnn_pair):
    """The fixture CNN pair open and compared; the worst layer (lowest accumulated SQNR) kept float."""
    fa, fb = (str(p) for p in cnn_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    use_random_samples(window)  # _opts() are random samples
    before = _compare(qtbot, window)
    worst = min((L for L in before.layers if L.op_type not in SKIP), key=lambda L: L.metrics.sqnr_db)
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    assert ed.current_route() == "surgical" and ed.new_choice.currentData() == "keep_float"  # the defaults
    window.controller.select_op("B", worst.op_index)  # as a click in the layer list or the plot does
    qtbot.mouseClick(ed.add_button, Qt.MouseButton.LeftButton)
    assert ed.table.item(0, 0).text() == str(worst.op_index)
    deltas: list[object] = []
    rq.delta_changed.connect(deltas.append)
    queued: list[bool] = []  # the delta (1,500 layers on a large model) is made a turn after the result...
    rq.finished.connect(lambda _v: queued.append(queue().pending(rq, "delta")))
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    qtbot.wait(50)
    assert queued == [True] and not queue().pending(rq, "delta")  # ...and was, in a turn of its own
    # The result of v1 arriving draws its delta table once (it was drawn twice: 1,500 rows each
    # time on a large model).
    shown = [d for d in deltas if d is not None]
    assert len(shown) == 1 and shown[0] is rq.delta, len(shown)
    return window, fa, fb, before, worst, blocker.args[0]


def test_keep_float_worst_layer_changes_only_that_op(qtbot, kept):
    win, fa, fb, before, worst, v1 = kept
    rq, panel = win.features.requantize, win.features.requantize_panel
    assert v1.kind == "edited" and v1.edited_ops == (worst.op_index,)
    assert [v.name for v in rq.versions] == ["v0 original int8", f"v1 keep-float op {worst.op_index} logits"]  # B's op and its name
    assert worst.op_type == "FULLY_CONNECTED"  # the CNN's logits
    assert win.controller.models["B"].path == v1.path != fb and rq.current == 1 and rq.reference == 0

    # Model B changed only at that op: every other op, tensor, quantization parameter and buffer
    # of the opened model is in the new file unchanged (read with the `tflite` package).
    old, new = Path(fb).read_bytes(), Path(v1.path).read_bytes()
    outs, consts = edited_names(old, [worst.op_index])
    assert_untouched(old, new, outs, consts)
    d_old, d_new = describe(old), describe(new)
    name = worst.tensor_name
    assert d_new["tensors"][name] == d_old["tensors"][name]  # consumers see the same int8 tensor
    changed = [outs_ for outs_, rec in d_new["ops"].items() if d_old["ops"].get(outs_) != rec]
    assert len(changed) == 3  # DEQUANTIZE in, the float op, QUANTIZE back to the original tensor
    nb = Model(v1.path)
    ops = [op.type for op in nb.main.ops]
    assert len(ops) == len(Model(fb).main.ops) + 2 and ops.count("FULLY_CONNECTED") == 2  # the CNN has two
    dtypes = [{nb.main.tensors[i].dtype for i in [*op.inputs, *op.outputs] if i >= 0} for op in nb.main.ops if op.type == "FULLY_CONNECTED"]
    assert sorted(map(sorted, dtypes)) == [["float32"], ["int8"]]  # the kept one in float, the other untouched

    # Output SQNR not lower, by independent comparisons on the same samples; the tab shows them.
    ind_before = output_sqnr_db(compare_models(fa, fb, _opts()))
    ind_after = output_sqnr_db(compare_models(fa, v1.path, _opts()))
    assert ind_after >= ind_before - 0.05
    d = rq.delta
    assert d.output_before_db == pytest.approx(ind_before, rel=1e-9)
    assert d.output_after_db == pytest.approx(ind_after, rel=1e-9)
    assert win.features.compare.baseline is before and win.features.compare.result is v1.comparison

    # The delta table lists exactly that op as edited (the rest are untouched upstream layers and
    # the layers downstream that only inherit the change).
    (edited,) = d.edited()  # the layer of model A's tensor; in the new B its float op computes it
    assert edited.float_tensor == worst.float_tensor and edited.after_dtype == "float32" and edited.before_dtype == "int8"
    table = panel.versions.deltas
    marked = [r for r in range(table.rowCount()) if table.item(r, 2).text()]
    assert len(marked) == 1 and table.item(marked[0], 2).text() == "keep float"
    assert table.item(marked[0], 1).text() == edited.tensor_name and table.item(marked[0], 0).text().split(" ")[0] == str(edited.op_index)
    assert nb.main.ops[edited.op_index].type == "FULLY_CONNECTED"  # the op index of the new B
    upstream = [L for L in before.layers if L.op_index < worst.op_index and L.op_type not in SKIP]
    rows = {r.float_tensor: r for r in d.rows}
    assert upstream
    for L in upstream:  # untouched and upstream: the same values exactly
        assert rows[L.float_tensor].delta_db == 0.0, L.tensor_name
    assert f"op {edited.op_index} keep float" in panel.versions.summary.text()
    assert panel.versions.reason.isHidden()  # only the quantizer route needs a reason
    assert panel.save_recipe_button.isEnabled()


def test_plan_saved_from_the_tab_reproduces_the_bytes(qtbot, kept, tmp_path):
    win, fa, fb, _before, _worst, v1 = kept
    out = tmp_path / "plan.json"
    assert win.features.requantize.save_recipe_to(out)
    plan = load_plan(str(out))
    assert json.loads(out.read_text())["route"] == "surgical"
    assert apply_plan(fa, fb, plan).model_bytes == Path(v1.path).read_bytes()
    assert not win.features.requantize.save_recipe_to(fb)  # never over an input
    assert "refusing to overwrite" in win.banner.text


def test_per_channel_and_recalibration_from_the_editor(qtbot, window, cnn_pair):
    """Two edits in one plan, chosen per row: the edited ops' weights / output parameters change,
    nothing else; the comparison's baseline is the previous B."""
    fa, fb = (str(p) for p in cnn_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    _compare(qtbot, window)
    c, rq, ed = window.controller, window.features.requantize, window.features.requantize_panel.editor
    convs = [op.index for op in c.models["B"].main.ops if op.type == "CONV_2D"]
    ed.ops_edit.setText(f"{convs[0]}, {convs[1]}")
    ed._add_typed()
    ed.set_row_choice(0, "per_channel")
    ed.set_row_choice(1, "recal_p9999")
    plan = ed.plan()
    assert [(e.kind, e.ops, e.calibration) for e in plan.edits] == [("per_channel", (convs[0],), None),
                                                                    ("recalibrate", (convs[1],), "percentile:99.99")]  # fmt: skip
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    v = blocker.args[0]
    old, new = Path(fb).read_bytes(), Path(v.path).read_bytes()
    outs, consts = edited_names(old, convs[:2])
    recal_out, _ = edited_names(old, [convs[1]])
    assert_untouched(old, new, outs, consts | recal_out)  # the re-calibrated output gets new parameters
    d_old, d_new = describe(old), describe(new)
    (out_name,) = recal_out
    assert d_new["tensors"][out_name][2] != d_old["tensors"][out_name][2]  # scale / zero-point changed
    w_name = next(n for n in edited_names(old, [convs[0]])[1] if d_old["tensors"][n][0] == 9)  # the int8 weights
    assert len(d_new["tensors"][w_name][2][0]) == d_new["tensors"][w_name][1][0] > 1  # one scale per output channel
    assert len(Model(v.path).main.ops) == len(Model(fb).main.ops)  # nothing replaced, only parameters
    assert sorted(r.edit for r in rq.delta.edited()) == ["per-channel", "re-calibrated (percentile:99.99)"]


def test_surgical_suggest_tradeoff_and_apply(qtbot, window):
    """On the trained classifier whose int8 twin has one damaged weight scale: Suggest (surgical,
    at the logits, the default for a softmax model) repairs that layer in one step; the trade-off
    plot shows what it tried; applying it makes the next version with that op marked as edited."""
    t = TaskFixtures(REPO / ".fixture-cache")
    m = t.models()
    fa, fb, npz = str(m["cls_float"]), str(m["cls_int8_broken"]), str(t.npz(40))
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    window.features.compare_features.inputs.set_options(CompareOptions(samples=SampleSettings(count=None, source=npz)))
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, window.features.compare_features.inputs.run_button)
    before = blocker.args[0]
    assert before.samples == 40
    rq, panel = window.features.requantize, window.features.requantize_panel
    box = panel.suggest
    assert box.treatment.currentData() == "surgical" and box.objective.currentData() == "op:5"  # the defaults
    box.use_target.setChecked(True)
    box.target.setValue(30.0)
    box.budget.setValue(2)
    with qtbot.waitSignal(rq.suggestion_changed, timeout=RUN_MS * 2) as blocker:
        click_enabled(qtbot, box.run_button)
    s = blocker.args[0]
    assert s.met and [(st.ops, st.edit) for st in s.steps] == [((2,), "weight_mse")] and s.baseline_sqnr_db < 10  # the diagnosed edit
    x, y = panel.tradeoff.point_data("candidates")
    want = [(s.baseline_size_bytes, s.baseline_sqnr_db)] + [(p.size_bytes, p.output_sqnr_db) for p in s.points]
    want = [(w[0] / 1024, w[1]) for w in want if w[1] is not None and math.isfinite(w[1])]
    assert len(want) >= 3
    np.testing.assert_allclose(x, [w[0] for w in want])
    np.testing.assert_allclose(y, [w[1] for w in want])
    assert panel.plot_tabs.currentWidget() is panel.tradeoff and box.apply_button.isEnabled()
    bx, by = panel.tradeoff.best.getData()
    assert list(bx) == [s.steps[0].size_bytes / 1024] and list(by) == pytest.approx([s.best_sqnr_db])
    assert "logits" in panel.tradeoff.plot.getPlotItem().getAxis("left").labelText
    text = box.result.text()
    assert "MSE weights on op 2" in text and "size +0.0 KiB" in text and "latency" in text

    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as done:
        qtbot.mouseClick(box.apply_button, Qt.MouseButton.LeftButton)
    v = done.args[0]
    assert v.kind == "suggested" and v.surgical and window.controller.models["B"].path == v.path
    assert v.edited_ops == (2,) and rq.reference == 0 and Path(v.path).stat().st_size == Path(fb).stat().st_size
    assert [r.op_index for r in rq.delta.edited()] == [2]
    # Suggest's output SQNR is the applied model's on the 13 held-out samples (27-39) it did not calibrate on.
    assert s.to_json()["evaluation"] == "held-out" and "13 held-out samples" in text
    held = compare_models(fa, v.path, CompareOptions(samples=SampleSettings(count=None, source=npz), samples_from=27))
    assert held.samples == 13 and output_sqnr_db(held) == pytest.approx(s.output_sqnr_db_after, abs=1e-3)
    assert output_sqnr_db(v.comparison) > output_sqnr_db(before) + 10

    qtbot.mouseClick(box.edit_button, Qt.MouseButton.LeftButton)  # the suggested plan into the editor
    ed = panel.editor
    assert ed.current_route() == "surgical" and len(ed.ops()) == 1 and ed.row_choice(0)[0] == "weight_mse"


def test_second_edit_on_the_edited_model_and_session(qtbot, kept, settings, tmp_path):
    """A second run edits the current B (v1, whose op numbering the keep-float changed): the
    plan names v1's op, only that op changes against v1, and the session brings both versions back."""
    from inspector.gui.main_window import MainWindow

    win, fa, fb, _before, worst, v1 = kept
    rq, ed = win.features.requantize, win.features.requantize_panel.editor
    b1 = Model(v1.path)
    # conv2: on these 4 samples its measured mean error is large enough to move its int32 bias
    conv = next(op.index for op in b1.main.ops if op.type == "CONV_2D" and "conv2_1" in b1.main.tensors[op.outputs[0]].name)
    assert conv != worst.op_index
    ed.clear_layers()
    ed.ops_edit.setText(str(conv))
    ed._add_typed()
    ed.set_row_choice(0, "bias_correct")
    assert [(e.kind, e.ops) for e in ed.plan().edits] == [("bias_correct", (conv,))]
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    v2 = blocker.args[0]
    assert v2.source == v1.path and v2.edited_ops == (conv,) and rq.reference == 1 and rq.current == 2
    old, new = Path(v1.path).read_bytes(), Path(v2.path).read_bytes()
    outs, consts = edited_names(old, [conv])
    assert_untouched(old, new, outs, consts)
    d_old, d_new = describe(old), describe(new)
    (op_outs,) = [k for k in d_old["ops"] if set(k) == outs]
    bias_old, bias_new = d_old["ops"][op_outs][2][2], d_new["ops"][op_outs][2][2]  # the op's bias input, by name
    assert d_new["tensors"][bias_new][3] != d_old["tensors"][bias_old][3]  # corrected int32 values
    assert d_new["tensors"][bias_new][:3] == d_old["tensors"][bias_old][:3]  # same type, shape, parameters
    (edited,) = rq.delta.edited()
    assert edited.op_index == conv and edited.edit == "bias correction" and rq.delta.before_name == v1.name

    path = tmp_path / "s.tqi.json"
    win.features.session.save(path)
    other = MainWindow(settings=settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.features.session.restored, timeout=RUN_MS):
        other.features.session.open(path)
    orq = other.features.requantize
    assert [v.path for v in orq.versions] == [fb, v1.path, v2.path] and orq.current == 2
    for got, want in zip(orq.versions[1:], (v1, v2), strict=True):
        assert got.surgical and got.plan == want.plan and got.edited_ops == want.edited_ops and got.source == want.source
    with qtbot.waitSignal(other.features.compare.result_changed, timeout=RUN_MS):  # v1 is compared when shown
        orq.switch_to(1)
    qtbot.waitUntil(lambda: orq.versions[1].comparison is not None, timeout=RUN_MS)
    orq.compare_versions(1, 2)
    qtbot.waitUntil(lambda: orq.delta is not None, timeout=RUN_MS)
    assert [r.op_index for r in orq.delta.edited()] == [conv]


def test_editor_offers_only_the_edits_that_apply(qtbot, window, cnn_pair):
    """Per-channel / bias correction need conv or FC weights, re-calibration a non-fixed int8
    output, a16w8 a 16x8 kernel: the other choices are greyed out per row, and adding one says so."""
    open_wait(qtbot, window, "A", cnn_pair[0])
    open_wait(qtbot, window, "B", cnn_pair[1])
    c, ed = window.controller, window.features.requantize_panel.editor
    qm = c.models["B"]
    add = next(op.index for op in qm.main.ops if op.type == "ADD")
    softmax = next(op.index for op in qm.main.ops if op.type == "SOFTMAX")
    msgs: list[str] = []
    ed.message.connect(msgs.append)
    ed.new_choice.setCurrentIndex(ed.new_choice.findData("per_channel"))
    ed.ops_edit.setText(f"{add}, {softmax}")
    ed._add_typed()
    assert msgs and f"per-channel weights does not apply to op {add} of model B (ADD)" in msgs[0]

    def enabled(row: int) -> set[str]:
        combo = ed.table.cellWidget(row, 3)
        return {combo.itemData(i) for i in range(combo.count()) if combo.model().item(i).isEnabled()}

    assert enabled(0) == {"keep_float", "a16w8", "recal_minmax", "recal_mse", "recal_p9999"}  # ADD
    assert enabled(1) == {"keep_float", "a16w8"}  # SOFTMAX: fixed output parameters; its int16 kernel (1/32768 grid)
    ed.set_route("quantizer")  # every treatment of the quantizer route stays available
    assert len(enabled(0)) == ed.table.cellWidget(0, 3).count()
