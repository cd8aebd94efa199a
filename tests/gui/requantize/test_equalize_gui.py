"""The equalize edit in the GUI: the plan editor offers it for a producer op (greyed out, with the
reason, where it does not apply), a run edits exactly the pair (flatbuffers diffed with the
`tflite` package), and "Apply fix" with a diagnosis proposing equalize(P, C) queues one edit of
the pair and reports the consumer's SQNR before -> after."""

from __future__ import annotations

import types
from pathlib import Path

import pytest

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.diagnosis_types import Diagnosis, Fix
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.equalize_fixtures import cache_paths, samples_npz
from tests.helpers.gui_helpers import click_enabled, open_wait
from tests.helpers.paths import REPO
from tests.helpers.surgical_helpers import describe

RUN_MS = 120_000


@pytest.fixture
def eq_pair(qtbot, window):
    root = REPO / ".fixture-cache"
    paths = cache_paths(root)
    open_wait(qtbot, window, "A", paths["eq_cnn_float"])
    open_wait(qtbot, window, "B", paths["eq_cnn_int8"])
    opts = CompareOptions(samples=SampleSettings(count=48, source=str(samples_npz(root, "cnn", 48, 3))))
    window.features.compare.set_options(opts)
    return window, paths["eq_cnn_int8"], opts


def _changed(old: bytes, new: bytes) -> set[str]:
    a, b = describe(old), describe(new)
    assert a["ops"] == b["ops"]
    return {n for n, rec in a["tensors"].items() if b["tensors"][n] != rec}


def _pair_tensors(q: Path, p: int, c: int) -> set[str]:
    sg = Model(q).main
    return {sg.tensors[sg.ops[i].inputs[k]].name for i in (p, c) for k in (1, 2)} | {sg.tensors[sg.ops[p].outputs[0]].name}


def test_editor_offers_equalize_for_a_producer_and_runs_it(qtbot, eq_pair):
    win, q, _opts = eq_pair
    ed, rq = win.features.requantize_panel.editor, win.features.requantize
    msgs: list[str] = []
    ed.message.connect(msgs.append)
    ed.new_choice.setCurrentIndex(ed.new_choice.findData("equalize"))
    ed.ops_edit.setText("2, 5")
    ed._add_typed()

    def enabled(row: int) -> set[str]:
        combo = ed.table.cellWidget(row, 3)
        return {combo.itemData(i) for i in range(combo.count()) if combo.model().item(i).isEnabled()}

    assert "equalize" in enabled(0) and "equalize" not in enabled(1)
    assert len(msgs) == 1 and "op 5 (CONV_2D" in msgs[0] and "its consumer op 6 (DEQUANTIZE" in msgs[0]
    ed.table.selectRow(1)
    ed.remove_selected()
    plan = ed.plan()
    assert [(e.kind, e.ops) for e in plan.edits] == [("equalize", (2,))]  # the consumer is found when it runs
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    v = blocker.args[0]
    assert v.kind == "edited" and v.edited_ops == (2, 3)
    assert v.name.startswith("v1 equalized op 2 conv2")
    assert _changed(q.read_bytes(), Path(v.path).read_bytes()) == _pair_tensors(q, 2, 3)
    assert any(n.startswith("gain: output SQNR") and "held-out" in n for n in v.notes)
    marks = {r.op_index: r.edit for r in rq.delta.edited()}
    assert marks == {2: "equalized (output ÷ s)", 3: "equalized"}  # the producer's reference is A's output ÷ s


def test_apply_fix_equalize_queues_the_pair(qtbot, eq_pair):
    win, q, opts = eq_pair
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS):
        win.features.compare.run(opts)
    feats = win.features.diagnosis_features
    fix = Fix("equalize", (2, 3))
    fake = types.SimpleNamespace(op_index=2, diagnosis=Diagnosis("channel_imbalance", "planted", fix))
    feats.layer = lambda op: fake if op == 2 else None  # the `stats` branch's cause proposes this fix
    with qtbot.waitSignal(win.features.requantize.finished, timeout=RUN_MS) as blocker:
        assert feats.apply_fix(2) is not None
    v = blocker.args[0]
    ed = win.features.requantize_panel.editor
    assert ed.table.rowCount() == 1 and ed.row_b_op(0) == 2 and ed.row_choice(0)[0] == "equalize"
    assert v.edited_ops == (2, 3) and v.name.startswith("v1 equalized op 2 conv2")  # named as from the editor
    assert _changed(q.read_bytes(), Path(v.path).read_bytes()) == _pair_tensors(q, 2, 3)
    lines = feats.outcome
    # the producer is compared with A's output ÷ s (compare.equalized): its SQNR before -> after too
    p_before, p_after = (float(x) for x in lines[0].split("SQNR ")[1].split(" dB")[0].split(" → "))
    assert lines[0].startswith("op 2 CONV_2D: SQNR") and "(against the float output ÷ s)" in lines[0] and p_after > p_before
    before, after = (float(x) for x in lines[1].split("SQNR ")[1].split(" dB")[0].split(" → "))
    assert lines[1].startswith("op 3 CONV_2D") and after >= before + 6.0
