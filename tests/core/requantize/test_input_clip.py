"""`input_clips` names an integer model input whose real values clip, and only that input: a float
input read by the same op as an integer one is not an integer input (it has no integer grid).

The model is generated with the LiteRT flatbuffer object API (no TensorFlow, milliseconds): inputs
`a` (int8, scale 0.01, zero point 3) and `b` (float32), both read by one ADD. The expected share
and range are computed here with numpy from the scale (as the file stores it) and zero point.
"""

from __future__ import annotations

import numpy as np
from ai_edge_litert import schema_py_generated as fb

from inspector.core.requantize.input_clip import input_clips
from inspector.core.samples.spec import Sample
from inspector.core.tflite.model import Model
from tests.helpers.hostile_fixtures import _op, _quant, _tensor, write_object

SCALE, ZP = 0.01, 3


def _mixed_inputs_model() -> bytes:
    m = fb.ModelT()
    m.version, m.description = 3, "int8 and float inputs read by one ADD"
    m.buffers = [fb.BufferT()]
    oc = fb.OperatorCodeT()
    oc.builtinCode = oc.deprecatedBuiltinCode = fb.BuiltinOperator.ADD
    oc.version = 1
    m.operatorCodes = [oc]
    sg = fb.SubGraphT()
    sg.tensors = [
        _tensor("a", [1, 4], fb.TensorType.INT8, 0, _quant(SCALE, ZP)),
        _tensor("b", [1, 4], fb.TensorType.FLOAT32, 0),
        _tensor("out", [1, 4], fb.TensorType.INT8, 0, _quant(0.02, 0)),
    ]
    sg.inputs, sg.outputs = [0, 1], [2]
    sg.operators = [_op(0, [0, 1], [2])]
    m.subgraphs = [sg]
    return write_object(m)


def test_only_the_integer_input_is_named(tmp_path):
    path = tmp_path / "mixed.tflite"
    path.write_bytes(_mixed_inputs_model())
    qm = Model(str(path))
    a = np.array([[-2.0, 0.5, 1.0, 3.0]], np.float32)  # two of four beyond the int8 grid
    b = np.array([[100.0, -100.0, 0.0, 7.0]], np.float32)  # float: no grid, never a candidate
    samples = [Sample(0, "s0", [a, b], names=("a", "b")), Sample(1, "s1", [a * 0.1, b], names=("a", "b"))]

    clips = input_clips(qm, samples)

    s = float(np.float32(SCALE))  # the file stores scales as float32
    lo, hi = (-128 - ZP) * s, (127 - ZP) * s
    values = np.concatenate([a.reshape(-1), (a * 0.1).reshape(-1)]).astype(np.float64)
    share = np.count_nonzero((values < lo) | (values > hi)) / values.size
    assert share == 2 / 8
    assert list(clips) == [0]
    clip = clips[0]
    assert (clip.tensor, clip.name) == (0, "a")
    assert clip.share == share
    assert (clip.lo, clip.hi) == (lo, hi)
