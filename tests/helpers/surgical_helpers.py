"""Independent checks for surgical edits: a flatbuffer diff with the `tflite` package (not the
object API the edits use), runs with both runtimes, and SQNR from numpy.
"""

from __future__ import annotations

import hashlib

import numpy as np
import tflite


def _name(b) -> str:
    return b.decode() if isinstance(b, bytes) else str(b)


_OPTION_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}


def options(op) -> tuple:
    """Every field of the op's builtin options table, read through the `tflite` package."""
    table = op.BuiltinOptions()
    name = _OPTION_NAMES.get(op.BuiltinOptionsType())
    if table is None or name in (None, "NONE"):
        return ()
    cls = getattr(tflite, name)
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    values = []
    for attr in sorted(dir(obj)):
        if attr.startswith(("_", "Init", "GetRootAs")) or attr.endswith(("IsNone", "Length")):
            continue
        fn = getattr(obj, attr)
        if not callable(fn):
            continue
        try:
            v = fn()
        except TypeError:  # vector element getters take an index; the AsNumpy form covers them
            continue
        values.append((attr, v.tolist() if isinstance(v, np.ndarray) else v))
    return tuple(values)


def describe(data: bytes) -> dict:
    """Every tensor (by name) and op (by output names) of subgraph 0, as comparable values."""
    m = tflite.Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)

    def tensor(i: int):
        t = sg.Tensors(i)
        q = t.Quantization()
        qv = None
        if q is not None:
            qv = (tuple(q.ScaleAsNumpy().tolist()) if q.ScaleLength() else (),
                  tuple(q.ZeroPointAsNumpy().tolist()) if q.ZeroPointLength() else (),
                  q.QuantizedDimension())  # fmt: skip
        buf = m.Buffers(t.Buffer())
        raw = buf.DataAsNumpy().tobytes() if buf is not None and buf.DataLength() else b""
        return (
            t.Type(),
            tuple(t.ShapeAsNumpy().tolist()) if t.ShapeLength() else (),
            qv,
            hashlib.sha256(raw).hexdigest(),
            t.IsVariable(),
        )

    tensors = {}
    for i in range(sg.TensorsLength()):
        tensors.setdefault(_name(sg.Tensors(i).Name()), tensor(i))

    def tname(i: int) -> str:
        return _name(sg.Tensors(i).Name()) if i >= 0 else "-"

    ops = {}
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        oc = m.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        opts = options(op)
        outs = tuple(tname(i) for i in op.OutputsAsNumpy().tolist())
        ins = tuple(tname(i) for i in op.InputsAsNumpy().tolist())
        ops[outs] = (code, oc.Version(), ins, op.BuiltinOptionsType(), opts)
    return {
        "tensors": tensors,
        "ops": ops,
        "op_list": [v[0] for v in ops.values()],
        "inputs": tuple(tname(i) for i in sg.InputsAsNumpy().tolist()),
        "outputs": tuple(tname(i) for i in sg.OutputsAsNumpy().tolist()),
    }


def op_records(data: bytes) -> list[tuple[int, tuple[str, ...], tuple[str, ...]]]:
    """(builtin code, input names, output names) of each op of subgraph 0, in order."""
    m = tflite.Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)
    out = []
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        oc = m.OperatorCodes(op.OpcodeIndex())
        names = [(_name(sg.Tensors(i).Name()) if i >= 0 else "-") for i in op.InputsAsNumpy().tolist()]
        outs = [_name(sg.Tensors(i).Name()) for i in op.OutputsAsNumpy().tolist()]
        out.append((max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode()), tuple(names), tuple(outs)))
    return out


def assert_untouched(before: bytes, after: bytes, edited_outputs: set[str], edited_consts: set[str]) -> None:
    """Every op of `before` whose outputs are not in `edited_outputs` is in `after` unchanged,
    and every tensor except the edited ops' constants (and outputs read only inside the edit)
    is identical: type, shape, quantization parameters and buffer bytes."""
    a, b = describe(before), describe(after)
    assert a["inputs"] == b["inputs"] and a["outputs"] == b["outputs"]
    for outs, rec in a["ops"].items():
        if set(outs) & edited_outputs:
            continue
        assert b["ops"].get(outs) == rec, f"op {outs} changed"
    for name, rec in a["tensors"].items():
        if name in edited_consts:
            continue
        if name in b["tensors"]:
            assert b["tensors"][name] == rec, f"tensor {name} changed"
        else:  # gone: allowed only for outputs of edited ops nobody outside them reads
            assert name in edited_outputs, f"tensor {name} disappeared"


def edited_names(data: bytes, ops: list[int]) -> tuple[set[str], set[str]]:
    """(output names, constant input names) of the ops `ops` of the model `data`."""
    m = tflite.Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)
    outs, consts = set(), set()
    for k in ops:
        op = sg.Operators(k)
        outs |= {_name(sg.Tensors(i).Name()) for i in op.OutputsAsNumpy().tolist()}
        for i in op.InputsAsNumpy().tolist():
            if i >= 0:
                t = sg.Tensors(i)
                buf = m.Buffers(t.Buffer())
                if buf is not None and buf.DataLength():
                    consts.add(_name(t.Name()))
    return outs, consts


def run_both(data: bytes, xs: np.ndarray) -> dict[str, np.ndarray]:
    """The first output for each sample with the reference kernels and with XNNPACK."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    out = {}
    for label, resolver in (("reference", OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES), ("xnnpack", OpResolverType.AUTO)):
        it = Interpreter(model_content=data, experimental_op_resolver_type=resolver, num_threads=1)
        it.allocate_tensors()
        inp, o = it.get_input_details()[0], it.get_output_details()[0]
        ys = []
        for x in xs:
            v = x[None]
            if inp["dtype"] != np.float32:
                s, z = inp["quantization"]
                v = np.clip(np.round(v / s + z), -128, 127).astype(inp["dtype"])
            it.set_tensor(inp["index"], v)
            it.invoke()
            y = it.get_tensor(o["index"]).astype(np.float64)
            if o["dtype"] != np.float32:
                s, z = o["quantization"]
                y = (y - z) * s
            ys.append(y)
        out[label] = np.concatenate(ys)
    return out


def sqnr(ref: np.ndarray, y: np.ndarray) -> float:
    err = float(np.sum((ref.astype(np.float64) - y) ** 2))
    return float("inf") if err == 0 else 10 * np.log10(float(np.sum(ref.astype(np.float64) ** 2)) / err)
