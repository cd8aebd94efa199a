"""Issue 35, item 9: selecting a RESHAPE or a MUL selected its constant input (the shape vector)
and the Weights tab drew a "histogram" of it. Only ops with weights have weights
(`layer_weights`); the others' constants are named for what they are (`no_weights_text`).
Checked against an independent flatbuffer parse (the `tflite` package)."""

from __future__ import annotations

import numpy as np
import tflite

from inspector.core.compare.weights import layer_weights, weight_tensor_of
from inspector.core.tflite.model import load_model
from inspector.core.tflite.op_facts import facts
from inspector.core.viewdata.weight_view import no_weights_text
from tests.helpers.paths import EXAMPLES, REPO
from tests.helpers.transformer_fixtures import transformer_path


def _constant_values(path, op_index: int) -> dict[str, list[int]]:
    """Each constant input of op `op_index` of subgraph 0, by name, read with the tflite package."""
    m = tflite.Model.GetRootAsModel(bytearray(open(path, "rb").read()), 0)
    sg = m.Subgraphs(0)
    op = sg.Operators(op_index)
    out = {}
    for k in range(op.InputsLength()):
        t = sg.Tensors(op.Inputs(k))
        buf = m.Buffers(t.Buffer())
        if buf.DataLength():
            out[t.Name().decode()] = np.frombuffer(buf.DataAsNumpy().tobytes(), np.int32).tolist()
    return out


def test_reshape_and_mean_have_no_weights_and_say_what_their_constants_are():
    q = EXAMPLES / "example_int8.tflite"
    m = load_model(q)
    sg = m.main
    reshape = next(o for o in sg.ops if o.type == "RESHAPE")
    assert weight_tensor_of(sg, reshape) is not None  # what the selection took: its shape vector
    assert layer_weights(sg, reshape) is None
    (name, shape), = _constant_values(q, reshape.index).items()
    text = no_weights_text(m, reshape.index)
    assert text.startswith(f"op {reshape.index} RESHAPE (") and "has no weights" in text.splitlines()[0]
    assert f"Constant input '{name}' (int32 [{len(shape)}] = [{', '.join(map(str, shape))}]): a shape operand" in text
    mean = next(o for o in sg.ops if o.type == "MEAN")  # not in the fact table: its int32 axes are no weights
    assert layer_weights(sg, mean) is None and "an axis, index or size operand" in no_weights_text(m, mean.index)
    for op in sg.ops:
        roles = facts(op.type).weights
        if roles is not None:  # every weighted op keeps its weights: the input its role names
            assert layer_weights(sg, op) == op.inputs[roles.weights], op.type


def test_a_mul_factor_is_no_weights_and_an_embedding_table_is():
    q = transformer_path(REPO / ".fixture-cache", "int8")
    m = load_model(q)
    sg = m.main
    mul = next(o for o in sg.ops if o.type == "MUL" and any(sg.tensors[i].is_constant and sg.tensors[i].num_elements > 8 for i in o.inputs))
    assert layer_weights(sg, mul) is None
    factor = next(sg.tensors[i] for i in mul.inputs if sg.tensors[i].is_constant)
    assert f"Constant input '{factor.name}' (int8 {list(factor.shape)}): an element-wise operand" in no_weights_text(m, mul.index)
    assert "select it in the tensor table" in no_weights_text(m, mul.index)
    gather = next(o for o in sg.ops if o.type == "GATHER")
    table = gather.inputs[0]
    assert sg.tensors[table].is_constant and len(sg.tensors[table].shape) == 2
    assert layer_weights(sg, gather) == table  # the embedding table: weights
