"""An edit that changes nothing is recognised: `same_content` against an independent reading of
both files with the `tflite` package (every op's input and output tensors: type, shape,
quantization, constant bytes)."""

from __future__ import annotations

import hashlib

import numpy as np
import tflite

from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.tflite.model import Model
from inspector.core.tflite.same_content import same_content


def _ops(data: bytes) -> list[tuple]:
    """Per op of subgraph 0: its code and its tensors' (type, shape, scales, zero points, data hash)."""
    m = tflite.Model.GetRootAsModel(data, 0)
    sg = m.Subgraphs(0)

    def tensor(i: int) -> tuple:
        if i < 0:
            return ("-",)
        t = sg.Tensors(i)
        q = t.Quantization()
        scales = tuple(np.float32(q.ScaleAsNumpy()).tolist()) if q is not None and q.ScaleLength() else ()
        zps = tuple(q.ZeroPointAsNumpy().tolist()) if q is not None and q.ZeroPointLength() else ()
        buf = m.Buffers(t.Buffer())
        raw = buf.DataAsNumpy().tobytes() if buf is not None and buf.DataLength() else b""
        return t.Type(), tuple(t.ShapeAsNumpy().tolist()) if t.ShapeLength() else (), scales, zps, hashlib.sha256(raw).hexdigest()

    out = []
    for k in range(sg.OperatorsLength()):
        op = sg.Operators(k)
        code = m.OperatorCodes(op.OpcodeIndex()).BuiltinCode()
        out.append((code, [tensor(i) for i in op.InputsAsNumpy()], [tensor(i) for i in op.OutputsAsNumpy()]))
    return out


def _close(a: list[tuple], b: list[tuple]) -> bool:
    """Equal, scales within one float32 rounding (a recomputed bias scale)."""
    if len(a) != len(b):
        return False
    for (ca, ia, oa), (cb, ib, ob) in zip(a, b, strict=True):
        if ca != cb or len(ia) != len(ib) or len(oa) != len(ob):
            return False
        for x, y in zip(ia + oa, ib + ob, strict=True):
            if len(x) == 1 or len(y) == 1:  # an omitted optional input
                if x != y:
                    return False
                continue
            if x[:2] != y[:2] or x[3:] != y[3:] or len(x[2]) != len(y[2]) or not np.allclose(x[2], y[2], rtol=1e-6, atol=0):
                return False
    return True


def _edit(example_pair, tmp_path, kind: str) -> tuple[str, str]:
    f, q = (str(p) for p in example_pair)
    conv = next(op.index for op in Model(q).main.ops if op.type == "CONV_2D")
    r = apply_plan(f, q, SurgicalPlan(edits=(Edit(kind, f"op:{conv}", None, (conv,)),)), None)
    out = tmp_path / f"{kind}.tflite"
    out.write_bytes(r.model_bytes)
    return q, str(out)


def test_per_channel_on_per_channel_weights_changes_nothing(example_pair, tmp_path):
    q, new = _edit(example_pair, tmp_path, "per_channel")
    old_b, new_b = open(q, "rb").read(), open(new, "rb").read()
    assert old_b != new_b  # other bytes (a new bias tensor, its layout) ...
    assert _close(_ops(old_b), _ops(new_b))  # ... but the same model
    assert same_content(Model(q), Model(new))


def test_keep_float_changes_the_model(example_pair, tmp_path):
    q, new = _edit(example_pair, tmp_path, "keep_float")
    assert not _close(_ops(open(q, "rb").read()), _ops(open(new, "rb").read()))
    assert not same_content(Model(q), Model(new))
    assert same_content(Model(q), Model(q))
