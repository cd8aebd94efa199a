"""Quantized models with planted violations of the TFLite quantization rules, for the audit tests.

`planted(fixture_path("int8"), names)` edits the converter-built full-int8 fixture through the
LiteRT flatbuffer object API (each builder changes one tensor in place) and returns the new
bytes with what was planted where (op index, tensor index, values), so tests can assert that
the audit finds exactly that.
No TensorFlow needed: editing takes milliseconds, so nothing is cached.

Fixture layout (tests/fixture_models.py keras_cnn, full int8): op 1 CONV_2D conv1, op 3 CONV_2D
pw1 (1x1), op 11 FULLY_CONNECTED fc1, op 13 SOFTMAX. Ops are found by type and position, not
by hard-coded tensor numbers.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.tools import flatbuffer_utils as fbu

_OPS = {v: k for k, v in vars(fb.BuiltinOperator).items() if not k.startswith("_")}


def _read(path: Path) -> fb.ModelT:
    return fbu.read_model_from_bytearray(bytearray(Path(path).read_bytes()))


def _write(m: fb.ModelT) -> bytes:
    for b in m.buffers or []:
        if b.data is not None and not isinstance(b.data, np.ndarray):
            b.data = np.asarray(b.data, np.uint8)
    return bytes(fbu.convert_object_to_bytearray(m))


def _ops(m: fb.ModelT, type_name: str) -> list[int]:
    codes = [max(c.builtinCode, c.deprecatedBuiltinCode) for c in m.operatorCodes]
    return [i for i, op in enumerate(m.subgraphs[0].operators) if _OPS.get(codes[op.opcodeIndex]) == type_name]


def _data(m: fb.ModelT, tensor: fb.TensorT, dtype) -> np.ndarray:
    """A writable numpy view of a constant tensor's buffer."""
    buf = m.buffers[tensor.buffer]
    buf.data = np.array(buf.data, np.uint8)  # own copy
    return buf.data.view(dtype)


def weight_zero_point(m: fb.ModelT) -> dict:
    """Zero-point 3 on every channel of the first CONV_2D's int8 weights."""
    op_i = _ops(m, "CONV_2D")[0]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].inputs[1])
    q = sg.tensors[ti].quantization
    q.zeroPoint = np.full(len(q.scale), 3, np.int64)
    return {"op_index": op_i, "tensor_index": ti, "zero_point": 3}


def bias_scale(m: fb.ModelT, factor: float = 1.1) -> dict:
    """Bias scale of the 1x1 CONV_2D multiplied by `factor` (10% off).

    The converter-built fixture is untrained and its biases are all zero, which makes any bias
    scale harmless; so the bias also gets real values (about +-0.05 in float) to make the wrong
    scale matter, as it would in a trained model.
    """
    op_i = _ops(m, "CONV_2D")[1]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].inputs[2])
    t = sg.tensors[ti]
    t.quantization.scale = np.asarray(t.quantization.scale, np.float32) * np.float32(factor)
    vals = _data(m, t, np.int32)
    scales = np.asarray(t.quantization.scale, np.float64)
    vals[:] = np.round(np.linspace(-0.05, 0.05, vals.size) / scales).astype(np.int32)
    return {"op_index": op_i, "tensor_index": ti, "ratio": factor}


def softmax_output_scale(m: fb.ModelT, scale: float = 1 / 128) -> dict:
    """SOFTMAX int8 output with scale 1/128 instead of the required 1/256."""
    op_i = _ops(m, "SOFTMAX")[0]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].outputs[0])
    sg.tensors[ti].quantization.scale = np.asarray([scale], np.float32)
    return {"op_index": op_i, "tensor_index": ti, "scale": float(np.float32(scale))}


def weight_minus_128(m: fb.ModelT, count: int = 3) -> dict:
    """`count` values of the first FULLY_CONNECTED's int8 weights set to -128."""
    op_i = _ops(m, "FULLY_CONNECTED")[0]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].inputs[1])
    vals = _data(m, sg.tensors[ti], np.int8)
    vals[[0, 17, 4095][:count]] = -128
    return {"op_index": op_i, "tensor_index": ti, "count": count}


def maxpool_output_scale(m: fb.ModelT) -> dict:
    """MAX_POOL_2D output scale doubled: the op must keep its input's scale."""
    op_i = _ops(m, "MAX_POOL_2D")[0]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].outputs[0])
    q = sg.tensors[ti].quantization
    q.scale = np.asarray(q.scale, np.float32) * np.float32(2)
    return {"op_index": op_i, "tensor_index": ti, "scale": float(q.scale[0])}


def weight_channel_dimension(m: fb.ModelT) -> dict:
    """Per-channel weights of the 1x1 CONV_2D declared along dimension 3 instead of 0."""
    op_i = _ops(m, "CONV_2D")[1]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].inputs[1])
    sg.tensors[ti].quantization.quantizedDimension = 3
    return {"op_index": op_i, "tensor_index": ti, "dimension": 3}


def int16_zero_point(m: fb.ModelT) -> dict:
    """For the a16w8 fixture: zero-point 5 on the first CONV_2D's int16 output."""
    op_i = _ops(m, "CONV_2D")[0]
    sg = m.subgraphs[0]
    ti = int(sg.operators[op_i].outputs[0])
    sg.tensors[ti].quantization.zeroPoint = np.asarray([5], np.int64)
    return {"op_index": op_i, "tensor_index": ti, "zero_point": 5}


PLANTED: dict[str, Callable[[fb.ModelT], dict]] = {
    "weight_zero_point": weight_zero_point,
    "bias_scale": bias_scale,
    "softmax_output_scale": softmax_output_scale,
    "weight_minus_128": weight_minus_128,
}
# Further violations (not part of the default set planted together).
EXTRA: dict[str, Callable[[fb.ModelT], dict]] = {
    "maxpool_output_scale": maxpool_output_scale,
    "weight_channel_dimension": weight_channel_dimension,
    "int16_zero_point": int16_zero_point,
}


def planted(src: Path, names: list[str] | None = None) -> tuple[bytes, dict[str, dict]]:
    """The model at `src` with the named violations planted (all by default; each edits a
    different tensor), and what was planted where."""
    m = _read(src)
    builders = PLANTED | EXTRA
    info = {name: builders[name](m) for name in (names or list(PLANTED))}
    return _write(m), info
