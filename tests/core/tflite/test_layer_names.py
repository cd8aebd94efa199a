"""Issue 19 §2: one name per layer (B's op index and a tensor name that tells it from every other
op), the same in plan rows, versions and Suggest's text. On a converter-built int8 model with
Keras-numbered layers ('activation', 'activation_1', ...), checked against the tensor names read
by an independent flatbuffer parse (the `tflite` package)."""

from __future__ import annotations

import tflite

from inspector.core.requantize.choices import describe_surgical, override_for, short_layer_name
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.tflite.layer_names import layer_name
from inspector.core.tflite.model import Model
from tests.helpers.naming_fixtures import named_layers_model
from tests.helpers.paths import REPO


def _independent(path):
    """(op type name, first output tensor name) per op of subgraph 0, by the `tflite` package."""
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    codes = {v: k for k, v in tflite.BuiltinOperator.__dict__.items() if not k.startswith("_")}
    out = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = m.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        out.append((codes[code], sg.Tensors(op.Outputs(0)).Name().decode()))
    return out


def test_numbered_keras_layers_get_distinct_names():
    path = named_layers_model(REPO / ".fixture-cache")
    ops = _independent(path)
    model = Model(str(path))
    convs = [i for i, (t, _) in enumerate(ops) if t == "CONV_2D"]
    dense = [i for i, (t, _) in enumerate(ops) if t == "FULLY_CONNECTED"]
    assert len(convs) == 3 and len(dense) == 2
    for group in (convs, dense):
        names = [short_layer_name(model, i) for i in group]
        assert len(set(names)) == len(names), names  # was 'activation' x3, 'dense' x2
        for i, n in zip(group, names, strict=True):
            assert n in ops[i][1] or n == ops[i][0].lower()  # part of its output tensor's name (bare names: the op type)
            assert layer_name(model, i) == f"op {i} {n}"
    every = [short_layer_name(model, i) for i in range(len(ops))]
    assert len(set(every)) == len(every), every


def test_versions_name_the_op_and_its_distinct_name():
    path = named_layers_model(REPO / ".fixture-cache")
    model = Model(str(path))
    fc = [i for i, op in enumerate(model.main.ops) if op.type == "FULLY_CONNECTED"]
    a = describe_surgical(SurgicalPlan((Edit("keep_float", f"op:{fc[0]}", ops=(fc[0],)),)), model)
    b = describe_surgical(SurgicalPlan((Edit("a16w8", f"op:{fc[1]}", ops=(fc[1],)),)), model)
    assert a == f"keep-float {layer_name(model, fc[0])}" and b.endswith(layer_name(model, fc[1]))
    assert a.split(" ", 1)[1] != b.split(" ", 1)[1]  # 'keep-float dense' / 'a16w8 dense' named the same layer name


def test_quantizer_route_versions_name_b_ops():
    """Versions of the quantizer route (a plan on A's ops) name each layer by the op of the B open
    when planned, as the surgical ones do: 'keep-float op 9 logits'."""
    from inspector.core.requantize.choices import version_name
    from inspector.core.requantize.plan import Plan
    from tests.helpers.paths import EXAMPLES

    fm = Model(str(EXAMPLES / "example_float.tflite"))
    plan = Plan(base="int8", overrides=(override_for(8, "keep_float"), override_for(9, "keep_float")))
    assert version_name(2, plan, fm) == "v2 keep-float logits, softmax"
    b_of = {8: 9, 9: 10}.get
    assert version_name(2, plan, fm, b_of=b_of) == "v2 keep-float op 9 logits, op 10 softmax"
    assert version_name(2, plan, fm, b_of=lambda _i: None) == "v2 keep-float A op 8 logits, A op 9 softmax"
