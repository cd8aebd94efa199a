"""Pairing: names first, graph structure when every name differs (models from other tools)."""

from __future__ import annotations

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pairing import pair_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model


def _renamed(src, dst):
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.read_model_from_bytearray(bytearray(src.read_bytes()))
    for si, sg in enumerate(m.subgraphs):
        for i, t in enumerate(sg.tensors):
            t.name = f"renamed_{si}_{i}".encode()
    dst.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    return dst


@pytest.mark.parametrize("quant", ["int8", "int8_io", "float16", "a16w8"])
def test_renamed_quant_model_pairs_by_structure(fixture_path, tmp_path, quant):
    fpath, qpath = fixture_path("float"), fixture_path(quant)
    renamed = _renamed(qpath, tmp_path / f"{quant}_renamed.tflite")
    fm, qm, rm = load_model(fpath), load_model(qpath), load_model(renamed)
    assert not {t.name for t in fm.main.tensors} & {t.name for t in rm.main.tensors}
    by_name, by_structure = pair_models(fm, qm), pair_models(fm, rm)
    assert by_structure.ops and all(p.match == "structure" for p in by_structure.ops)
    # the structural pairing finds the same op and tensor counterparts as the name pairing
    assert [(p.float_op, p.quant_op) for p in by_structure.ops] == [(p.float_op, p.quant_op) for p in by_name.ops]
    for op in qm.main.ops:
        for o in op.outputs:
            if by_name.float_for_quant(o) is not None:
                assert by_structure.float_for_quant(o) == by_name.float_for_quant(o), qm.main.tensors[o].name

    a = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=2)))
    b = compare_models(str(fpath), str(renamed), CompareOptions(samples=SampleSettings(count=2)))
    assert [x.quant_tensor for x in a.layers] == [x.quant_tensor for x in b.layers]
    assert all(x.match == "structure" for x in b.layers)
    for x, y in zip(a.layers, b.layers, strict=True):
        assert x.metrics.mse == pytest.approx(y.metrics.mse, rel=1e-9, abs=1e-15)
    assert len(b.unmatched) == len(a.unmatched)


def test_name_matches_are_reported_as_name(fixture_path):
    fm, qm = load_model(fixture_path("float")), load_model(fixture_path("int8"))
    p = pair_models(fm, qm)
    conv = [x for x in p.ops if qm.main.ops[x.quant_op].type == "CONV_2D"]
    assert len(conv) == 3 and all(x.match == "name" for x in conv)
    assert p.unmatched_float_ops == ()


def test_unmatched_ops_are_listed_not_dropped(fixture_path, tmp_path):
    """A quantized model with an extra op: the op shows up in `unmatched`."""
    from ai_edge_litert.tools import flatbuffer_utils as fu

    fpath = fixture_path("float")
    m = fu.read_model_from_bytearray(bytearray(fixture_path("float").read_bytes()))
    sg = m.subgraphs[0]
    # drop the SOFTMAX op from the "float" side: the quantized SOFTMAX has no counterpart
    soft = next(i for i, op in enumerate(sg.operators) if fu.opcode_to_name(m, op.opcodeIndex) == "SOFTMAX")
    logits_out = sg.operators[soft].inputs[0]
    sg.outputs = [logits_out]
    del sg.operators[soft]
    m.signatureDefs = []
    cut = tmp_path / "float_no_softmax.tflite"
    cut.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    res = compare_models(str(cut), str(fixture_path("int8")), CompareOptions(samples=SampleSettings(count=1)))
    assert any(u["op_type"] == "SOFTMAX" and u["side"] == "quant" for u in res.unmatched)
    assert all(layer.op_type != "SOFTMAX" for layer in res.layers)
    assert fpath.exists()
