"""The op facts table against what TF's converter writes and LiteRT accepts (the int8 spec).

Models are built at test time (conv, depthwise, transpose conv, dense, max pool, concatenation,
global max pool = REDUCE_MAX, tanh, sigmoid, softmax) in int8 and 16x8, and read back with the
independent `tflite` flatbuffer package: weights and biases sit where the table says, weights are
symmetric along the table's channel dimension, biases have scale S_in·S_w, same-scale ops keep
their input's parameters and fixed-output ops have the table's parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.tflite.op_facts import (
    A16W8_OPS,
    BOUNDARY_OPS,
    PROBABILITY_OPS,
    SAME_SCALE_OPS,
    SUGGEST_SKIP_OPS,
    SURGICAL_WEIGHT_OPS,
    WEIGHTED_OPS,
    facts,
    fixed_output,
)
from tests.helpers.cache import cached_model
from tests.helpers.paths import REPO

CACHE = REPO / ".fixture-cache" / "op_facts"


def _keras():
    from tests.helpers.fixture_models import _tf

    tf = _tf()
    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    b = {"bias_initializer": "random_normal"}  # a zero bias is left out by the converter
    inp = L.Input((16, 16, 3), name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="conv", **b)(inp)
    x = L.DepthwiseConv2D(3, padding="same", name="dw", **b)(x)
    t = L.Conv2DTranspose(4, 3, strides=2, padding="same", name="tconv", **b)(x)
    t = L.MaxPooling2D(name="pool")(t)
    c = L.Concatenate(name="cat")([x, t])
    g = L.GlobalMaxPooling2D(name="gmax")(c)
    h = L.Dense(8, name="fc", **b)(g)
    outs = [L.Activation("tanh", name="tanh")(h), L.Activation("sigmoid", name="sig")(h),
            L.Softmax(name="probs")(L.Dense(5, name="logits", **b)(h))]  # fmt: skip
    return tf.keras.Model(inp, outs)


def _build(mode: str) -> bytes:
    from tests.helpers.fixture_models import _rep_dataset, convert

    return convert(_keras(), mode, _rep_dataset(16, 0, (16, 16, 3)))


@pytest.fixture(scope="module", params=["int8", "a16w8"])
def model(request):
    import tflite

    path = cached_model(CACHE / f"ops_{request.param}.tflite", lambda: _build(request.param))
    return request.param, path, tflite.Model.GetRootAsModel(path.read_bytes(), 0)


def _ops(m):
    import tflite

    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    sg = m.Subgraphs(0)
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = m.OperatorCodes(op.OpcodeIndex())
        yield names[max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())], op, sg


def _q(sg, t: int):
    import tflite

    dtypes = {v: k.lower() for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
    tt = sg.Tensors(t)
    q = tt.Quantization()
    if q is None:
        return dtypes[tt.Type()], np.zeros(0), np.zeros(0), 0, tt
    return dtypes[tt.Type()], q.ScaleAsNumpy(), q.ZeroPointAsNumpy(), q.QuantizedDimension(), tt


def test_the_converter_agrees_with_the_table(model):
    mode, _, m = model
    seen = set()
    for name, op, sg in _ops(m):
        seen.add(name)
        ins, outs = list(op.InputsAsNumpy()), list(op.OutputsAsNumpy())
        r = WEIGHTED_OPS.get(name)
        if r is not None:
            wd, ws, wz, wdim, wt = _q(sg, ins[r.weights])
            assert wd == "int8" and m.Buffers(wt.Buffer()).DataLength() > 0, name
            assert not np.any(wz), f"{name}: int8 weights are symmetric"
            if len(ws) > 1:
                assert wdim == r.channel_dim, name
            if len(ins) <= r.bias or ins[r.bias] < 0:
                continue  # the converter moved this bias into an ADD
            _, xs, _, _, _ = _q(sg, ins[r.activation])
            bd, bs, bz, _, _ = _q(sg, ins[r.bias])
            assert bd == {"int8": "int32", "a16w8": "int64"}[mode] and not np.any(bz), name
            np.testing.assert_allclose(bs, xs[0] * ws, rtol=1e-5, err_msg=name)
        in_d, in_s, in_z, _, _ = _q(sg, ins[0])
        out_d, out_s, out_z, _, _ = _q(sg, outs[0])
        want = fixed_output(name, in_d, out_d)
        if want is not None:
            assert (float(out_s[0]), int(out_z[0])) == pytest.approx(want), name
        elif name in SAME_SCALE_OPS:
            for t in (t for t in ins if t >= 0):
                d, s, z, _, _ = _q(sg, t)
                if d == out_d and isinstance(s, np.ndarray) and len(s):
                    assert (s[0], z[0]) == pytest.approx((out_s[0], out_z[0])), name
    want_seen = {"CONV_2D", "DEPTHWISE_CONV_2D", "TRANSPOSE_CONV", "FULLY_CONNECTED", "MAX_POOL_2D", "CONCATENATION",
                 "REDUCE_MAX", "TANH", "LOGISTIC", "SOFTMAX"}  # fmt: skip
    assert want_seen <= seen
    assert {"TANH", "LOGISTIC", "SOFTMAX"} <= {n for n in seen if facts(n).fixed_outputs}


def test_sixteen_bit_ops_run_in_litert(model):
    """Every op the table says has a 16x8 kernel is written with int16 activations and runs."""
    mode, path, m = model
    if mode != "a16w8":
        pytest.skip("the 16x8 model only")
    from ai_edge_litert.interpreter import Interpreter

    for name, op, sg in _ops(m):
        if name in A16W8_OPS:
            assert _q(sg, op.OutputsAsNumpy()[0])[0] == "int16", name
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    it.invoke()


def test_spec_facts_of_design_section_4():
    """The rules as docs/ARCHITECTURE.md "Quantization rules the audit checks" words them, independent of the converter."""
    assert WEIGHTED_OPS["CONV_2D"].channel_dim == WEIGHTED_OPS["FULLY_CONNECTED"].channel_dim == 0
    assert WEIGHTED_OPS["DEPTHWISE_CONV_2D"].channel_dim == 3
    assert WEIGHTED_OPS["TRANSPOSE_CONV"].bias == 3  # inputs: output_shape, weights, input, bias
    assert fixed_output("LOGISTIC", "int8", "int8") == fixed_output("SOFTMAX", "int8", "int8") == (1 / 256, -128)
    assert fixed_output("TANH", "int8", "int8") == (1 / 128, 0)
    assert fixed_output("SOFTMAX", "int16", "int16") == (1 / 32768, 0)
    assert fixed_output("CONV_2D", "int8", "int8") is None
    assert {"RESHAPE", "MAX_POOL_2D", "CONCATENATION", "REDUCE_MAX"} <= SAME_SCALE_OPS
    assert BOUNDARY_OPS == {"QUANTIZE", "DEQUANTIZE"} and PROBABILITY_OPS == {"SOFTMAX", "LOGISTIC"}
    assert SURGICAL_WEIGHT_OPS == {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"} <= A16W8_OPS
    # Suggest: both routes skip the same ops (the surgical route also skipped SOFTMAX/LOGISTIC).
    assert SUGGEST_SKIP_OPS == {"QUANTIZE", "DEQUANTIZE", "RESHAPE", "SHAPE", "STRIDED_SLICE", "PACK", "SQUEEZE"}


def test_reduce_max_must_keep_its_input_scale_in_the_audit(model, tmp_path):
    """REDUCE_MAX copies integers (the spec's same-scale list); the audit used to skip it."""
    mode, path, _ = model
    if mode != "int8":
        pytest.skip("the int8 model only")
    from ai_edge_litert.tools import flatbuffer_utils as fu

    from inspector.core.review.audit import audit_model
    from inspector.core.tflite.model import load_model

    m = fu.read_model(str(path))
    sg = m.subgraphs[0]
    op = next(o for o in sg.operators if m.operatorCodes[o.opcodeIndex].builtinCode == 82)  # REDUCE_MAX
    sg.tensors[op.outputs[0]].quantization.scale = np.asarray(sg.tensors[op.outputs[0]].quantization.scale) * 1.5
    out = tmp_path / "bad_reduce_max.tflite"
    out.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    findings = audit_model(load_model(out))
    assert any(f.rule == "preserve-scale" and f.op_type == "REDUCE_MAX" for f in findings)


def test_transpose_conv_bias_is_rescaled_when_weights_are_made_symmetric(model):
    """The quantizer's asymmetric weights repair read TRANSPOSE_CONV's input (position 2) as its bias."""
    mode, path, _ = model
    if mode != "int8":
        pytest.skip("the int8 model only")
    from ai_edge_litert.tools import flatbuffer_utils as fu

    from inspector.core.requantize.fixes import asymmetric_weight_ops, symmetrize_weights
    from inspector.core.tflite import edit as fe

    m = fu.read_model(str(path))
    sg = m.subgraphs[0]
    oi = next(i for i, o in enumerate(sg.operators) if fe.op_name(m, o) == "TRANSPOSE_CONV")
    op = sg.operators[oi]
    w = sg.tensors[op.inputs[1]]
    w.quantization.zeroPoint = np.full(len(w.quantization.scale), 3, np.int64)  # as with symmetric: false
    assert (0, oi) in asymmetric_weight_ops(m)
    symmetrize_weights(m, [(0, oi)])
    s_in = float(sg.tensors[op.inputs[2]].quantization.scale[0])
    bias = sg.tensors[op.inputs[3]].quantization.scale
    np.testing.assert_allclose(bias, s_in * np.asarray(w.quantization.scale), rtol=1e-5)


# ------------------------------------------------------------------ one table, one place (issue 27 item 5)
def _core_sources():
    import ast

    root = REPO / "inspector" / "core"
    for path in sorted(root.rglob("*.py")):
        yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_op_name_collections_live_in_op_facts():
    """A set/tuple/list of >= 2 op names (or a dict keyed by them) written outside op_facts.py is a
    second list of one category: the callers read op_facts instead. Op names come from the
    independent `tflite` package's BuiltinOperator."""
    import ast

    import tflite

    op_names = {n for n in vars(tflite.BuiltinOperator) if n.isupper()}
    found = []
    for rel, tree in _core_sources():
        if rel.endswith("tflite/op_facts.py"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
                elts = [e for e in node.elts if not isinstance(e, ast.Starred)]
            elif isinstance(node, ast.Dict):
                elts = [k for k in node.keys if k is not None]
            else:
                continue
            strings = [e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            if len(strings) >= 2 and len(strings) == len(elts) and all(s in op_names for s in strings):
                found.append(f"{rel}:{node.lineno} {strings}")
    assert not found, "op-name lists outside op_facts:\n" + "\n".join(found)


def test_each_op_list_is_defined_once_in_the_package():
    """In core, where op facts live (the GUI and CLI only read them; a core test reads no GUI code)."""
    import ast

    names = {"A16W8_OPS": [], "WEIGHT_OPS": []}
    for rel, tree in _core_sources():
        for node in ast.walk(tree):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
            for t in targets:
                if isinstance(t, ast.Name) and t.id in names:
                    names[t.id].append(rel)
    assert names == {"A16W8_OPS": ["inspector/core/tflite/op_facts.py"], "WEIGHT_OPS": ["inspector/core/tflite/op_facts.py"]}


def test_no_subgraph_defaults_to_zero_in_core():
    """Op indices count in one subgraph; a default of 0 silently addresses the wrong one for a
    signature whose subgraph is not 0. Function parameters and dataclass fields alike."""
    import ast

    def zero(d):
        return isinstance(d, ast.Constant) and d.value == 0 and not isinstance(d.value, bool)

    found = []
    for rel, tree in _core_sources():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                pos = [*a.posonlyargs, *a.args]
                pairs = [*zip(pos[len(pos) - len(a.defaults):], a.defaults, strict=True), *zip(a.kwonlyargs, a.kw_defaults, strict=True)]
                found += [f"{rel}:{node.lineno} {p.arg}=0" for p, d in pairs if p.arg == "subgraph" and d is not None and zero(d)]
            elif isinstance(node, ast.ClassDef):
                found += [f"{rel}:{s.lineno} {node.name}.subgraph = 0" for s in node.body
                          if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                          and s.target.id == "subgraph" and s.value is not None and zero(s.value)]  # fmt: skip
    assert not found, "subgraph defaulting to 0:\n" + "\n".join(found)


def test_the_moved_categories_keep_their_callers_contents():
    """The lists moved from task_kind, keras/naming, keras/qat, compare/weights, diagnosis, audit,
    concat_layout, extract, model_prep and clamp_ranges kept their contents (each caller its own)."""
    from inspector.core.tflite import op_facts as o

    assert o.CLASS_SCORE_OPS == {"SOFTMAX", "LOGISTIC", "LOG_SOFTMAX"}
    assert o.CLASS_SCORE_PATH_OPS == {"DEQUANTIZE", "QUANTIZE", "RESHAPE", "SQUEEZE"}
    assert o.ACTIVATION_OPS == {"SOFTMAX", "LOGISTIC", "TANH", "RELU", "RELU6", "HARD_SWISH"}
    assert o.FOLLOWED_ACTIVATION_OPS == o.ACTIVATION_OPS | {"LOG_SOFTMAX"}
    assert o.WEIGHT_OPS == set(WEIGHTED_OPS) and all(r.weights == 1 for r in WEIGHTED_OPS.values())
    assert o.EQUALIZE_OPS == SURGICAL_WEIGHT_OPS == {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"}
    assert o.WEIGHT_DECODER_OPS == {"DEQUANTIZE", "DENSIFY"}
    assert o.CONCAT_OPS == {"CONCATENATION", "PACK"}
    assert o.PASS_THROUGH_OPS == {"QUANTIZE", "DEQUANTIZE", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
    assert o.REQUANTIZE_PATH_OPS == {"QUANTIZE", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"}
    assert o.OUTPUT_CONCAT_PATH_OPS == {"DEQUANTIZE", "QUANTIZE", "RESHAPE"}
    assert o.SLICE_PATH_OPS == {"QUANTIZE", "DEQUANTIZE", "SHAPE", "RESHAPE", "SQUEEZE", "STRIDED_SLICE", "PACK",
                                "EXPAND_DIMS"}  # fmt: skip
    assert o.CONTROL_FLOW_OPS == {"WHILE", "IF"}
    assert o.NOT_EXTRACTABLE_OPS == {"WHILE", "IF", "CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"}
    assert o.UNQUANTIZED_INT_OPS == {"SHAPE", "CAST", "ARG_MAX", "ARG_MIN"}
    assert o.OP_CLAMPS == {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}
    assert facts("RELU6").output_clamp == (0.0, 6.0) and facts("RELU").output_clamp is None
