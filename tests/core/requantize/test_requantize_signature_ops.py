"""`op:INDEX` in a requantize plan addresses the chosen signature's subgraph (the op index the
GUI and `compare --signature` show), not subgraph 0: checked on the two-signature fixture
against the float model read independently of the plan code."""

from __future__ import annotations

from inspector.core.requantize.plan import OpRef, Override, Plan, select
from inspector.core.requantize.quantizer_route import requantize
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model, load_model
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path

CACHE = REPO / ".fixture-cache"


def _refs(m: Model) -> list[OpRef]:
    return [OpRef(sg.index, op.index, op.type, tuple(sg.tensors[o].name for o in op.outputs if o >= 0), ())
            for sg in m.subgraphs for op in sg.ops]  # fmt: skip


def test_op_index_addresses_the_signature_subgraph():
    m = load_model(cache_path(CACHE, "sig_float"))
    for key in ("prefill", "decode"):
        view = m.for_signature(key)
        last = len(view.main.ops) - 1
        chosen = select(Plan(overrides=(Override(f"op:{last}", "keep_float"),)), _refs(m), subgraph=view.main.index)
        ((sg, idx),) = chosen
        assert (sg, idx) == (view.main.index, last)
        want = view.main.ops[last]
        assert chosen[(sg, idx)].op.output_names == tuple(view.main.tensors[o].name for o in want.outputs)
    plan = Plan(overrides=(Override("op:0", "keep_float"),))
    assert next(iter(select(plan, _refs(m), subgraph=m.main.index))) == (0, 0)  # the whole model: subgraph 0


def test_requantize_keeps_the_signature_op_float(tmp_path):
    f = cache_path(CACHE, "sig_float")
    m = load_model(f)
    view = m.for_signature("prefill")
    sg = view.main
    fc = next(op for op in sg.ops if op.type == "FULLY_CONNECTED")
    out_name = sg.tensors[fc.outputs[0]].name
    res = requantize(str(f), Plan(overrides=(Override(f"op:{fc.index}", "keep_float"),)), None,
                     sample_settings=SampleSettings(count=4), signature="prefill")  # fmt: skip
    out = tmp_path / "requant-prefill.tflite"
    out.write_bytes(res.model_bytes)
    q = load_model(out).for_signature("prefill").main
    fcs = [op for op in q.ops if op.type == "FULLY_CONNECTED"]
    dtypes = {q.tensors[op.outputs[0]].name: q.tensors[op.inputs[1]].dtype for op in fcs}
    kept = [n for n, d in dtypes.items() if d == "float32"]
    assert len(kept) == 1 and out_name.split(";")[0] in kept[0], dtypes
    assert sum(d == "int8" for d in dtypes.values()) == len(fcs) - 1 >= 1
