"""Issue 35, item 9: another version of model B keeps the selected layer, also when its edit
renumbers B's ops. Keep float of op k inserts DEQUANTIZE before it and QUANTIZE after it, the
QUANTIZE writing the old tensor's name; the selection found by that name landed on the QUANTIZE
with no tensor. It is found through A's op (the new pairing) and keeps the same role (the weights)."""

from __future__ import annotations

from inspector.core.compare.weights import layer_weights
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.state.app_state import AppState, Selection
from inspector.core.state.versions import Version
from inspector.core.tflite.model import load_model


def _kept_version(fixture_path, tmp_path, op_type: str) -> tuple[str, str, str, int]:
    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    q = load_model(qp)
    k = next(o.index for o in q.main.ops if o.type == op_type)
    v1 = tmp_path / "v1_keep_float.tflite"
    v1.write_bytes(apply_plan(fp, qp, SurgicalPlan((Edit("keep_float", f"op:{k}"),))).model_bytes)
    return fp, qp, str(v1), k


def _switch(s: AppState, fp: str, qp: str, v1: str) -> None:
    s.add_version(Version(1, "v1 keep float", v1, fp, "edited", source=qp))
    s.set_current(1)
    s.set_model("B", load_model(v1))


def test_the_kept_op_stays_selected_with_its_weights(fixture_path, tmp_path):
    fp, qp, v1, k = _kept_version(fixture_path, tmp_path, "CONV_2D")
    s = AppState()
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    old = s.models["B"].main
    a_op = s.pairing.float_op_for(k)
    s.select(Selection("B", a_op, k, None, layer_weights(old, old.ops[k])))
    _switch(s, fp, qp, v1)
    new = s.models["B"].main
    assert len(new.ops) == len(old.ops) + 2  # renumbered: DEQUANTIZE before, QUANTIZE after
    sel = s.selection
    # independent: the op of the new B that computes in float and reads A's float weights
    float_ops = [o.index for o in new.ops if o.type == "CONV_2D" and new.tensors[o.outputs[0]].dtype == "float32"]
    assert float_ops == [sel.op_b] and sel.op_b == k + 1 and sel.op_a == a_op
    assert sel.tensor_b == new.ops[sel.op_b].inputs[1] and new.tensors[sel.tensor_b].dtype == "float32"  # its weights


def test_a_later_op_follows_the_renumbering(fixture_path, tmp_path):
    fp, qp, v1, k = _kept_version(fixture_path, tmp_path, "CONV_2D")
    s = AppState()
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    old = s.models["B"].main
    later = next(o.index for o in old.ops if o.type == "FULLY_CONNECTED")
    out = old.ops[later].outputs[0]
    s.select(Selection("B", s.pairing.float_op_for(later), later, None, out))
    _switch(s, fp, qp, v1)
    new = s.models["B"].main
    sel = s.selection
    assert sel.op_b == later + 2 and new.ops[sel.op_b].type == "FULLY_CONNECTED"
    assert new.tensors[sel.tensor_b].name == old.tensors[out].name and sel.tensor_b == new.ops[sel.op_b].outputs[0]
