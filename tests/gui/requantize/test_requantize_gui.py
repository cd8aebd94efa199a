"""Requantize tab, quantizer route (regenerate from the float file; the surgical default route is
in test_surgical_gui.py): select two layers, keep them float, run -> a "re-calibrated, no
changes" version seeded from B is made first and is the baseline (with the reason shown), then
model B is the plan's model (those ops float, checked in the file), the comparison re-ran with
the baseline series, output SQNR improved (vs independent compare_models runs), deltas table,
notes; switch back to v0; save model / recipe (recipe reproduces the bytes; input paths
refused); quantizer suggest + trade-off plot + apply; a failing run reaches the banner."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.requantize.delta import output_sqnr_db
from inspector.core.requantize.jobs import calibration_samples
from inspector.core.requantize.quantizer_route import requantize
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.gui_helpers import click_enabled, open_wait, use_random_samples

RUN_MS = 120_000
SAMPLES, SEED = 4, 3
LOGITS, SOFTMAX = 8, 9  # float-model ops of the example: the final FULLY_CONNECTED and SOFTMAX


def _sha(p) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def _compare(qtbot, win):
    panel = win.features.compare_features.inputs
    use_random_samples(win)
    panel.count.setValue(SAMPLES)
    panel.seed.setValue(SEED)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def _op_dtypes(model: Model, name: str) -> tuple[str, list[str]]:
    """(output dtype, input dtypes) of the op whose first output is tensor `name`."""
    sg = model.main
    op = next(o for o in sg.ops if o.outputs and sg.tensors[o.outputs[0]].name == name)
    return sg.tensors[op.outputs[0]].dtype, [sg.tensors[i].dtype for i in op.inputs if i >= 0]


@pytest.fixture
def loop(qtbot, window, example_pair, tmp_path):
    """The example pair open, compared, and the final two layers requantized to keep float."""
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    before = _compare(qtbot, window)
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    ed.set_route("quantizer")
    ed.new_choice.setCurrentIndex(ed.new_choice.findData("keep_float"))
    for op in (LOGITS, SOFTMAX):  # select each layer (as a click in a layer list does), then Add
        window.controller.select_op("A", op)
        qtbot.mouseClick(ed.add_button, Qt.MouseButton.LeftButton)
    assert ed.ops() == [LOGITS, SOFTMAX]
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    return window, fa, fb, before, blocker.args[0]


def test_keep_float_two_layers_improves_output(qtbot, loop):
    win, fa, fb, before, v2 = loop
    rq, panel = win.features.requantize, win.features.requantize_panel
    fm = Model(fa)
    names = [fm.main.tensors[fm.main.ops[i].outputs[0]].name for i in (LOGITS, SOFTMAX)]

    # Model B is the new file, written into the versions folder; the input files are untouched.
    # A "re-calibrated, no changes" version (seeded from the opened B) came first: the baseline.
    b = win.controller.models["B"]
    assert b.path == v2.path and Path(v2.path).parent == rq.folder and b.path != fb
    assert [v.name for v in rq.versions] == ["v0 original int8", "v1 re-calibrated, no "
                                                                 "changes", "v2 keep-float op 9 logits, op 10 softmax"]  # B's ops (after the input QUANTIZE)
    v1 = rq.versions[1]
    assert v1.kind == "recalibrated" and v1.source == fb and v1.plan.overrides == () and rq.current == 2 and rq.reference == 1
    assert v2.source == fb and Path(v1.path).parent == rq.folder
    reason = panel.versions.reason
    assert not reason.isHidden() and "Baseline is v1 re-calibrated, no changes" in reason.text()
    assert "only the plan's effect" in reason.text() and reason.text() in panel.editor.status.text()

    # Those two ops compute in float in the new B (read from the file); the convolutions are int8.
    nb = Model(v2.path)
    for name in names:
        out, ins = _op_dtypes(nb, name)
        assert out == "float32" and set(ins) == {"float32"}, name
    conv = fm.main.tensors[fm.main.ops[3].outputs[0]].name  # pw1
    assert _op_dtypes(nb, conv)[0] == "int8"
    assert _op_dtypes(Model(fb), names[0])[0] == "int8"  # it was int8 before

    # The comparison re-ran on the new B with the same samples; the re-calibrated one is the baseline.
    after = win.features.compare.result
    assert after is v2.comparison and after.quant_path == v2.path and after.samples == SAMPLES
    base = v1.comparison
    assert base is not None and win.features.compare.baseline is base and base.quant_path == v1.path
    for plot in (panel.plot, win.features.compare_features.plot):  # two series: baseline + new
        xb, yb = plot.point_data("baseline")
        xa, ya = plot.point_data("accumulated")
        assert len(xb) >= 9 and len(xa) >= 9
    bx, by = panel.plot.point_data("baseline")
    want = {L.float_tensor: L.metrics.sqnr_db for L in base.layers}
    depth = {L.float_tensor: L.op_index for L in after.layers}
    for L in base.layers:  # baseline points sit at the new run's op index (of B) of the same float tensor
        if math.isfinite(want[L.float_tensor]) and L.float_tensor in depth:
            k = list(bx).index(depth[L.float_tensor])
            assert by[k] == pytest.approx(want[L.float_tensor], rel=1e-9)

    # Output SQNR improved, and the deltas are the independent comparisons' numbers.
    opts = CompareOptions(samples=SampleSettings(count=SAMPLES, seed=SEED))
    ind_opened = output_sqnr_db(compare_models(fa, fb, opts))
    ind_before = output_sqnr_db(compare_models(fa, v1.path, opts))
    ind_after = output_sqnr_db(compare_models(fa, v2.path, opts))
    assert output_sqnr_db(before) == pytest.approx(ind_opened, rel=1e-9)
    d = rq.delta
    assert d.output_before_db == pytest.approx(ind_before, rel=1e-9)
    assert d.output_after_db == pytest.approx(ind_after, rel=1e-9)
    assert ind_after > ind_before + 1.0  # the digits example, 4 random samples: about +1.5 dB
    assert d.size_before == Path(v1.path).stat().st_size and d.size_after == Path(v2.path).stat().st_size
    assert not d.edited()  # the quantizer route edits nothing in place
    table = panel.versions.deltas
    assert table.rowCount() == len(d.rows) == len(after.layers)
    row = next(r for r in range(table.rowCount()) if table.item(r, 1).text() == names[0])
    layer_b = next(L for L in base.layers if L.float_tensor == fm.main.ops[LOGITS].outputs[0])
    layer_a = next(L for L in after.layers if L.tensor_name == names[0])
    assert table.item(row, 3).text() == f"{layer_b.metrics.sqnr_db:.4g} dB"
    assert table.item(row, 4).text() == f"{layer_a.metrics.sqnr_db:.4g} dB"
    assert table.item(row, 5).text() == f"{layer_a.metrics.sqnr_db - layer_b.metrics.sqnr_db:+.2f}"
    assert table.item(row, 6).text() == "FULLY_CONNECTED · int8 → float32"
    assert f"{ind_after:.4g} dB" in panel.versions.summary.text()
    assert panel.versions.table.rowCount() == 3
    assert panel.versions.table.item(2, 2).text() == f"{ind_after:.4g} dB"

    # The plan's gain over the re-calibrated model, and where it was measured (few samples: in-sample).
    assert v2.notes[0].startswith(f"gain: output SQNR {ind_before:.2f} dB → {ind_after:.2f} dB") and "in-sample" in v2.notes[0]
    # The quantizer's notes are shown (the example hits the legacy-opcode trap).
    assert v2.notes and all(n in panel.notes.toPlainText() for n in v2.notes)
    assert any("operator code" in n for n in v2.notes)

    # Switch back to v0: model B is the original again, with its stored comparison (no re-run).
    win.tabs.setCurrentWidget(panel)
    panel.middle_tabs.setCurrentWidget(panel.versions)
    table = panel.versions.table
    at = table.visualRect(table.model().index(0, 0)).center()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=at)  # a real double-click:
    qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=at)  # press, release, double
    qtbot.waitUntil(lambda: win.controller.models["B"].path == fb and win.features.compare.result is before, timeout=RUN_MS)
    assert rq.current == 0 and _sha(win.controller.models["B"].path) == _sha(fb)


def test_save_model_and_recipe(qtbot, loop, tmp_path):
    win, fa, fb, _before, v1 = loop  # v1 here: the plan's version (v2, after the re-calibrated one)
    rq = win.features.requantize
    fb_hash, fa_hash = _sha(fb), _sha(fa)

    out = tmp_path / "kept_float.tflite"
    assert rq.save_model_to(out)
    assert out.read_bytes() == Path(v1.path).read_bytes()
    assert len(Model(str(out)).main.ops) == len(Model(v1.path).main.ops)

    for target in (fb, fa):  # never over an input model: refused, with the path in the message
        assert not rq.save_model_to(target)
        assert "refusing to overwrite an input model" in win.banner.text and target in win.banner.text
    assert _sha(fb) == fb_hash and _sha(fa) == fa_hash

    recipe_path = tmp_path / "recipe.json"
    assert rq.save_recipe_to(recipe_path)
    recipe = json.loads(recipe_path.read_text())
    assert recipe == v1.recipe and sum(r.get("algorithm_key") == "no_quantize" for r in recipe) >= 2
    # The recipe reproduces the model, calibrated on the comparison's samples.
    samples = calibration_samples(fa, fb, CompareOptions(samples=SampleSettings(count=SAMPLES, seed=SEED)))
    again = requantize(fa, None, samples, recipe=recipe, calibrate_from=fb)
    assert again.model_bytes == Path(v1.path).read_bytes()

    rq.switch_to(0)
    qtbot.waitUntil(lambda: win.controller.models["B"].path == fb, timeout=RUN_MS)
    assert not rq.save_recipe_to(tmp_path / "v0.json")  # the opened model has no recipe
    assert "no recipe" in win.banner.text and not (tmp_path / "v0.json").exists()


def test_suggest_tradeoff_and_apply(qtbot, window, example_pair):
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    _compare(qtbot, window)
    rq, panel = window.features.requantize, window.features.requantize_panel
    box = panel.suggest
    box.treatment.setCurrentIndex(box.treatment.findData("keep_float"))  # the quantizer route
    box.use_target.setChecked(True)
    box.target.setValue(200.0)  # unreachable: the budget of one layer ends the search
    box.budget.setValue(1)
    with qtbot.waitSignal(rq.suggestion_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, box.run_button)
    s = blocker.args[0]
    assert len(s.layers) == 1 and not s.met and len(s.points) >= 3
    x, y = panel.tradeoff.point_data("candidates")
    want = [(p.size_bytes / 1024, p.output_sqnr_db) for p in s.points if math.isfinite(p.output_sqnr_db)]
    np.testing.assert_allclose(x, [w[0] for w in want])
    np.testing.assert_allclose(y, [w[1] for w in want])
    assert panel.plot_tabs.currentWidget() is panel.tradeoff and box.apply_button.isEnabled()
    assert len(panel.tradeoff.best.getData()[0]) == 1

    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as done:
        qtbot.mouseClick(box.apply_button, Qt.MouseButton.LeftButton)
    v = done.args[0]
    assert v.kind == "suggested" and window.controller.models["B"].path == v.path
    assert v.name.startswith("v1 suggest: keep-float")
    # The applied model's output SQNR (re-compared in the GUI) is the one Suggest measured for it.
    chosen = next(p for p in s.points if p.layers == (s.layers[0]["op"],))
    assert output_sqnr_db(v.comparison) == pytest.approx(chosen.output_sqnr_db, rel=1e-6)
    xv, _ = panel.tradeoff.point_data("versions")
    assert len(xv) == 2


def test_failure_reaches_banner(qtbot, window, example_pair):
    fb = str(example_pair[1])
    open_wait(qtbot, window, "A", fb)  # a quantized model as the 'float' model
    open_wait(qtbot, window, "B", fb)
    rq = window.features.requantize
    window.features.requantize_panel.editor.set_route("quantizer")
    with qtbot.waitSignal(rq.failed, timeout=RUN_MS) as blocker:
        rq.run(window.features.requantize_panel.editor.plan())
    msg = blocker.args[0]
    assert "already quantized" in msg and fb in msg
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert msg in window.banner.text and len(rq.versions) == 1 and not rq.running


def test_cancel_keeps_model_b(qtbot, window, example_pair):
    """Cancel a surgical run (long: the comparison of the current B runs first)."""
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    use_random_samples(window)  # the example's bundled inputs are too few to still be running
    window.features.compare_features.inputs.count.setValue(100_000)
    ed.add_layers([LOGITS], "keep_float")
    with qtbot.waitSignal(rq.running_changed, timeout=RUN_MS, check_params_cb=lambda running, _w: not running):
        with qtbot.waitSignal(rq.progress, timeout=RUN_MS):  # the run is under way in the worker
            click_enabled(qtbot, ed.run_button)
        assert ed.cancel_button.isEnabled() and not ed.run_button.isEnabled()
        qtbot.mouseClick(ed.cancel_button, Qt.MouseButton.LeftButton)
    assert len(rq.versions) == 1 and window.controller.models["B"].path == fb
    assert ed.status.text() == "Cancelled." and ed.run_button.isEnabled()
    assert not window.banner.isVisible()


def test_session_restores_versions(qtbot, loop, settings, tmp_path):
    from inspector.gui.main_window import MainWindow

    win, fa, fb, _before, v1 = loop
    path = tmp_path / "s.tqi.json"
    win.features.session.save(path)
    other = MainWindow(settings=settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.features.session.restored, timeout=RUN_MS):
        other.features.session.open(path)
    rq = other.features.requantize
    assert [v.name for v in rq.versions] == [v.name for v in win.features.requantize.versions]
    assert [v.path for v in rq.versions] == [fb, win.features.requantize.versions[1].path, v1.path]
    assert rq.current == 2 and other.controller.models["B"].path == v1.path
    assert rq.versions[2].plan == v1.plan and rq.versions[2].recipe == v1.recipe and rq.versions[2].source == fb
    assert rq.versions[1].kind == "recalibrated" and rq.versions[1].source == fb
    assert rq.versions[2].comparison is not None  # the session's comparison, for this version
    assert output_sqnr_db(rq.versions[2].comparison) == pytest.approx(output_sqnr_db(v1.comparison), rel=1e-9)


def test_parse_typed_op_indices():
    from inspector.gui.requantize.plan_editor import parse_ops

    assert parse_ops("11, 12 op:4; 7-9") == [11, 12, 4, 7, 8, 9]
    assert parse_ops("  ") == []
    with pytest.raises(ValueError, match="'conv2' is not an op index"):
        parse_ops("3, conv2")


def test_worker_killed_mid_run_is_an_error_not_a_crash(qtbot, window, example_pair):
    import os
    import signal

    from inspector.core.runtime import worker as isolation

    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    use_random_samples(window)
    window.features.compare_features.inputs.count.setValue(100_000)  # long: the before-comparison runs first
    ed.add_layers([LOGITS], "keep_float")
    failures: list[str] = []
    rq.failed.connect(failures.append)
    with qtbot.waitSignal(rq.running_changed, timeout=RUN_MS, check_params_cb=lambda running, _w: not running):
        with qtbot.waitSignal(rq.progress, timeout=RUN_MS):
            click_enabled(qtbot, ed.run_button)
        pid = isolation.default_worker().pid
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
    (msg,) = failures
    assert "SIGKILL" in msg and "editing model B" in msg and (fa in msg or fb in msg)
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert msg in window.banner.text
    assert len(rq.versions) == 1 and window.controller.models["B"].path == fb

    window.features.compare_features.inputs.count.setValue(SAMPLES)  # the next run gets a fresh worker
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS):
        click_enabled(qtbot, ed.run_button)
    assert len(rq.versions) == 2 and window.controller.models["B"].path == rq.versions[1].path


def test_typed_op_indices_are_b_ops(qtbot, window, example_pair):
    """The requantize field takes B's op indices (as the plot, tables and compare --json show);
    the plan names A's matching op, and each row shows B's op with A's beside it."""
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    c, ed = window.controller, window.features.requantize_features.panel.editor
    b_ops = [op.index for op in c.models["B"].main.ops if op.type == "CONV_2D"]
    pairs = [(b, c.counterpart_op("B", b)) for b in b_ops]
    b, a = next((b, a) for b, a in pairs if a is not None and a != b)  # QUANTIZE at the input shifts B's numbering
    ed.ops_edit.setText(str(b))
    ed._add_typed()
    assert ed.ops() == [a] and ed.table.item(0, 0).text() == str(b) and f"A: op {a}" in ed.table.item(0, 1).text()
    assert [(e.pattern, e.ops) for e in ed.plan().edits] == [(f"op:{b}", (b,))]  # surgical: B's op
    ed.set_route("quantizer")
    assert ed.ops() == [a] and f"op:{a}" in [o.selector for o in ed.plan().overrides]  # quantizer: A's op
    quant = next(op.index for op in c.models["B"].main.ops if op.type == "QUANTIZE")
    msgs = []
    ed.message.connect(msgs.append)
    ed.ops_edit.setText(str(quant))
    ed._add_typed()  # quantizer route: regenerating from A cannot name an op A does not have
    assert msgs and "no counterpart in model A" in msgs[-1] and ed.ops() == [a]


def test_surgical_rows_hold_b_ops_also_without_a_counterpart(qtbot, window, example_pair):
    """Issue 18 §1: on the surgical route a row is B's op. The input QUANTIZE of B (no op of A)
    can be re-calibrated: typed, added from the selection, and a surgical plan naming it (e.g.
    Suggest's, via "Edit plan") round-trips through the editor instead of being dropped."""
    from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan

    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    c, ed = window.controller, window.features.requantize_features.panel.editor
    qm = c.models["B"]
    quant = next(op.index for op in qm.main.ops if op.type == "QUANTIZE")
    conv = next(op.index for op in qm.main.ops if op.type == "CONV_2D")
    assert c.counterpart_op("B", quant) is None and c.counterpart_op("B", conv) is not None
    plan = SurgicalPlan((Edit("recalibrate", f"op:{quant}", "mse", (quant,)), Edit("per_channel", f"op:{conv}", ops=(conv,))))
    ed.set_plan(plan)
    assert ed.b_ops() == [quant, conv] and ed.ops() == [c.counterpart_op("B", conv)]
    assert [(e.kind, e.ops, e.calibration) for e in ed.surgical_plan().edits] == [(e.kind, e.ops, e.calibration) for e in plan.edits]
    assert ed.table.item(0, 0).text() == str(quant) and "QUANTIZE" in ed.table.item(0, 1).text()
    ed.clear_layers()
    ed.ops_edit.setText(str(quant))
    ed._add_typed()
    assert ed.b_ops() == [quant]
    ed.clear_layers()
    c.select_op("B", quant)  # e.g. a click on the layer-error plot, which emits B's op index
    window.features.requantize_features.add_selected()
    assert ed.b_ops() == [quant] and [e.ops for e in ed.surgical_plan().edits] == [(quant,)]
