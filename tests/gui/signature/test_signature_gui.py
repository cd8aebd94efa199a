"""Signature chooser (issue 15): a two-signature pair offers prefill/decode, choosing 'decode'
re-views both panes on that subgraph and compares it (layer results = core's compare_models with
signature='decode'); a session saves and restores the choice; a one-signature model hides it."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.session import load_session
from inspector.core.tflite.model import Model
from tests.helpers.gui_helpers import choose_signature, click_enabled, open_wait, use_random_samples
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import DYN_WIDTH, cache_path

RUN_MS = 60_000
CACHE = REPO / ".fixture-cache"


def test_chooser_offers_the_signatures(sig_window, sig_pair):
    win = sig_window
    chooser = win.features.signature_features.chooser
    assert not chooser.isHidden()
    ref = Model(sig_pair[1])
    keys = [chooser.combo.itemData(k) for k in range(chooser.combo.count())]
    assert sorted(k for k in keys if k is not None) == sorted(s.key for s in ref.signatures) == ["decode", "prefill"]
    assert win.state.options.signature is None  # nothing chosen yet: subgraph 0, as the CLI
    sub0 = next(s.key for s in ref.signatures if s.subgraph == 0)
    assert chooser.current_key() == sub0


def test_choosing_decode_compares_that_signature(qtbot, sig_window, sig_pair):
    win = sig_window
    fa, fb = (str(p) for p in sig_pair)
    choose_signature(qtbot, win, "prefill")  # decode is subgraph 0, shown by default: go away and back
    assert win.panes["B"].ops.subgraph.index == Model(fb).for_signature("prefill").main.index == 1
    choose_signature(qtbot, win, "decode")
    ref_q = Model(fb).for_signature("decode")
    ref_f = Model(fa).for_signature("decode")
    assert win.state.options.signature == "decode"
    assert win.features.compare_features.inputs.options().signature == "decode"  # the Run button keeps it
    # The op tables show the decode subgraph of each model.
    for slot, ref in (("A", ref_f), ("B", ref_q)):
        pane = win.panes[slot]
        assert pane.ops.subgraph is not None and pane.ops.subgraph.index == ref.main.index
        assert [pane.ops.data(pane.ops.index(r, 1)) for r in range(pane.ops.rowCount())] == [op.type for op in ref.main.ops]
        assert "signature 'decode'" in pane.info.text()
    assert "kv_cache: 1×8×16 float32" in win.features.signature_features.chooser.details.text()

    panel = win.features.compare_features.inputs
    panel.count.setValue(3)
    panel.seed.setValue(5)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    result = blocker.args[0]
    assert result.signature == "decode"
    indep = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=3, seed=5), signature="decode"))
    assert len(result.layers) == len(indep.layers) >= 4
    assert [(lay.op_index, lay.tensor_name) for lay in result.layers] == [(lay.op_index, lay.tensor_name) for lay in indep.layers]
    got = np.array([lay.metrics.mse for lay in result.layers])
    want = np.array([lay.metrics.mse for lay in indep.layers])
    np.testing.assert_allclose(got, want, rtol=1e-9)
    # The layers are decode's ops (the decode subgraph has a SOFTMAX; prefill has none).
    assert {lay.op_type for lay in result.layers} <= {op.type for op in ref_q.main.ops}
    assert any(lay.op_type == "SOFTMAX" for lay in result.layers)

    # Selecting a layer selects that op in decode's subgraph of B (and A's counterpart).
    lay = result.layers[0]
    win.features.compare_features.select_layer(lay.op_index)
    assert win.controller.selection.op("B") == lay.op_index

    # Back to prefill: the decode result is dropped (its ops are another subgraph's).
    choose_signature(qtbot, win, "prefill")
    assert win.features.compare.result is None
    assert win.panes["B"].ops.subgraph.index == Model(fb).for_signature("prefill").main.index


def test_session_saves_and_restores_the_signature(qtbot, sig_window, sig_pair, tmp_path):
    win = sig_window
    choose_signature(qtbot, win, "prefill")
    b_ops = len(win.panes["B"].ops.subgraph.ops)
    win.controller.select_op("B", b_ops - 1)
    path = tmp_path / "s.tqi.json"
    win.features.session.save(path)
    assert load_session(path)["inputs"]["signature"] == "prefill"
    choose_signature(qtbot, win, "decode")
    with qtbot.waitSignal(win.features.session.restored, timeout=20_000):
        win.features.session.open(path)
    assert win.state.options.signature == "prefill"
    assert win.features.signature_features.chooser.current_key() == "prefill"
    assert win.panes["B"].ops.subgraph.index == Model(sig_pair[1]).for_signature("prefill").main.index
    assert win.controller.selection.op("B") == b_ops - 1  # indices of prefill's subgraph


def test_single_signature_model_shows_no_chooser(qtbot, window, example_pair):
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    assert window.features.signature_features.chooser.isHidden()
    assert window.state.options.signature is None


def test_dynamic_input_shows_its_signature_shape_and_runs_with_the_samples(qtbot, window, tmp_path):
    f, q = cache_path(CACHE, "dyn_float"), cache_path(CACHE, "dyn_int8")
    open_wait(qtbot, window, "A", f)
    open_wait(qtbot, window, "B", q)
    chooser = window.features.signature_features.chooser
    assert not chooser.isHidden() and chooser.combo.isHidden()  # nothing to choose, but a dynamic input
    qm = Model(q)
    t = qm.main.tensors[qm.main.inputs[0]]
    assert t.shape_signature == (-1, -1)
    (sig,) = qm.signatures
    name = next(n for n, i in sig.inputs.items() if i == t.index)  # the signature's input name
    assert chooser.details.text().splitlines()[0] == f"{name}: ?×? {t.dtype}" == "audio: ?×? float32"
    assert "resized to the samples' shape" in chooser.details.text()
    table = window.panes["B"].tensors
    row = [table.model.data(table.model.index(t.index, c)) for c in range(4)]
    assert row[1] == t.name and row[3] == "[?×?]"

    rng = np.random.default_rng(4)
    npz = tmp_path / "audio.npz"
    np.savez(npz, audio=rng.uniform(-1, 1, (3, DYN_WIDTH)).astype(np.float32))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(npz))
    panel.count.setValue(0)  # all
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    result = blocker.args[0]
    assert result.samples == 3
    indep = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=None, source=str(npz))))
    assert len(result.layers) == len(indep.layers) >= 5
    np.testing.assert_allclose([lay.metrics.mse for lay in result.layers], [lay.metrics.mse for lay in indep.layers], rtol=1e-9)
    (out,) = result.outputs
    assert out.metrics.mse == pytest.approx(indep.outputs[0].metrics.mse, rel=1e-9)


@pytest.mark.parametrize("route", ["surgical", "quantizer"])
def test_requantize_uses_the_chosen_signature(qtbot, sig_window, sig_pair, route):
    """A layer chosen while comparing 'prefill' is kept float in prefill's subgraph of the new
    version (calibrated on prefill's inputs); the new version compares on prefill too. The
    surgical route leaves decode's subgraph (subgraph 0) exactly as it was."""
    from PySide6.QtCore import Qt

    win = sig_window
    choose_signature(qtbot, win, "prefill")
    fm = Model(sig_pair[0]).for_signature("prefill")
    fc = next(op for op in fm.main.ops if op.type == "FULLY_CONNECTED")
    rq, ed = win.features.requantize, win.features.requantize_panel.editor
    assert ed.draft.float_model is not None and ed.draft.float_model.main.index == fm.main.index == 1  # the editor lists prefill's ops
    ed.route.setCurrentIndex(ed.route.findData(route))
    ed.new_choice.setCurrentIndex(ed.new_choice.findData("keep_float"))
    win.controller.select_op("A", fc.index)
    qtbot.mouseClick(ed.add_button, Qt.MouseButton.LeftButton)
    assert ed.ops() == [fc.index]
    with qtbot.waitSignal(rq.finished, timeout=120_000) as blocker:
        click_enabled(qtbot, ed.run_button)
    version = blocker.args[0]
    new = Model(version.path).for_signature("prefill").main
    fcs = {new.tensors[op.outputs[0]].name: new.tensors[op.inputs[1]].dtype for op in new.ops if op.type == "FULLY_CONNECTED"}
    want = fm.main.tensors[fc.outputs[0]].name + ("/float" if route == "surgical" else "")  # surgical: QUANTIZEd into B's tensor
    assert [n for n, d in fcs.items() if d == "float32"] == [want], fcs
    assert win.features.compare.result is not None and win.features.compare.result.signature == "prefill"
    assert win.features.compare.result.quant_path == version.path
    if route == "surgical":
        from inspector.core.tflite.model import Model as M

        old_d, new_d = M(sig_pair[1]).for_signature("decode").main, M(version.path).for_signature("decode").main
        assert old_d.index == new_d.index == 0 and len(old_d.ops) == len(new_d.ops)
        for a, b in zip(old_d.tensors, new_d.tensors, strict=True):
            assert (a.name, a.dtype, a.shape) == (b.name, b.dtype, b.shape)
            da, db = M(sig_pair[1]).tensor_data(a), M(version.path).tensor_data(b)
            assert (da is None and db is None) or bytes(memoryview(da)) == bytes(memoryview(db)), a.name


def test_surgical_suggest_on_the_chosen_signature(qtbot, sig_window, sig_pair):
    """Suggest while comparing 'prefill' (subgraph 1): it ranks and edits prefill's ops; the
    applied version compares on prefill, and decode's subgraph keeps every byte."""
    win = sig_window
    choose_signature(qtbot, win, "prefill")
    panel = win.features.compare_features.inputs
    use_random_samples(win)
    panel.count.setValue(4)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS):
        click_enabled(qtbot, panel.run_button)
    rq, box = win.features.requantize, win.features.requantize_panel.suggest
    assert box.treatment.currentData() == "surgical"
    box.use_target.setChecked(False)
    box.use_budget.setChecked(True)
    box.budget.setValue(1)
    with qtbot.waitSignal(rq.suggestion_changed, timeout=RUN_MS * 2) as blocker:
        click_enabled(qtbot, box.run_button)
    s = blocker.args[0]
    prefill = Model(sig_pair[1]).for_signature("prefill").main
    assert s.plan is not None and s.plan.signature == "prefill" and s.steps
    assert all(0 <= i < len(prefill.ops) for st in s.steps for i in st.ops)
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as done:
        click_enabled(qtbot, box.apply_button)
    v = done.args[0]
    assert win.features.compare.result is not None and win.features.compare.result.signature == "prefill" and win.features.compare.result.quant_path == v.path
    old_d, new_d = Model(sig_pair[1]).for_signature("decode").main, Model(v.path).for_signature("decode").main
    assert [t.name for t in old_d.tensors] == [t.name for t in new_d.tensors] and len(old_d.ops) == len(new_d.ops)
    for a, b in zip(old_d.tensors, new_d.tensors, strict=True):
        if a.is_constant:
            assert bytes(memoryview(Model(sig_pair[1]).tensor_data(a))) == bytes(memoryview(Model(v.path).tensor_data(b))), a.name
