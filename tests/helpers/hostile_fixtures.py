"""Model builders for the hostile-input, isolation and big-model tests and benchmarks.

No TensorFlow here: models are edited or built with the LiteRT flatbuffer object API, so
the builders are fast and their output is exactly what the test asks for. Big generated
models are cached in `.fixture-cache/hostile-<key>/` (keyed by this file's content).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as fb
from ai_edge_litert.tools import flatbuffer_utils as fbu

from tests.helpers.cache import cached_model

REPO = Path(__file__).resolve().parents[2]
BuiltinOperator = fb.BuiltinOperator


def read_object(data: bytes | Path) -> fb.ModelT:
    raw = Path(data).read_bytes() if isinstance(data, Path | str) else data
    return fbu.read_model_from_bytearray(bytearray(raw))


def write_object(model: fb.ModelT) -> bytes:
    for b in model.buffers or []:  # lists pack byte by byte: give the packer arrays
        if b.data is not None and not isinstance(b.data, np.ndarray):
            b.data = np.asarray(b.data, np.uint8)
    return bytes(fbu.convert_object_to_bytearray(model))


def edit_model(data: bytes | Path, fn: Callable[[fb.ModelT], None]) -> bytes:
    """Apply `fn` to the object form of a model and serialize it again."""
    m = read_object(data)
    fn(m)
    return write_object(m)


def to_offset_buffers(data: bytes | Path, placeholder: int = 2) -> bytes:
    """The same model in the > 2 GB layout: buffer data after the flatbuffer, by offset/size."""
    m = read_object(data)
    blobs = []
    for b in m.buffers:
        if b.data is not None and len(b.data):
            blobs.append(np.asarray(b.data, np.uint8).tobytes())
            b.data = None
            b.offset, b.size = placeholder, len(blobs[-1])
        else:
            blobs.append(b"")
    head = bytearray(write_object(m))
    out = bytearray(head)
    fbm = fb.Model.GetRootAs(head, 0)
    for i, blob in enumerate(blobs):
        if not blob:
            continue
        out += b"\0" * (-len(out) % 16)
        fbu.update_packed_buffer(fbm.Buffers(i), offset=len(out), size=len(blob))
        out += blob
    out[: len(head)] = head
    return bytes(out)


# ---------------------------------------------------------------------- dense chain models
def _tensor(name: str, shape, ttype: int, buffer: int, quant: fb.QuantizationParametersT | None = None) -> fb.TensorT:
    t = fb.TensorT()
    t.name, t.shape, t.type, t.buffer, t.quantization = name, list(shape), ttype, buffer, quant
    return t


def _quant(scales, zps, dim: int = 0) -> fb.QuantizationParametersT:
    q = fb.QuantizationParametersT()
    q.scale = [float(s) for s in np.atleast_1d(scales)]
    q.zeroPoint = [int(z) for z in np.atleast_1d(zps)]
    q.quantizedDimension = dim
    return q


def _op(code: int, inputs, outputs, opts_type: int = 0, opts=None) -> fb.OperatorT:
    op = fb.OperatorT()
    op.opcodeIndex, op.inputs, op.outputs = code, list(inputs), list(outputs)
    op.builtinOptionsType, op.builtinOptions = opts_type, opts
    return op


class ModelBuilder:
    """A one-subgraph model ("main") built tensor by tensor with the flatbuffer object API:
    operator codes and buffers added as they are first used, and `finish` writes it with a
    "serving_default" signature from its input to its output."""

    def __init__(self, description: str) -> None:
        self.m = m = fb.ModelT()
        m.version, m.description = 3, description
        m.buffers = [fb.BufferT()]
        m.operatorCodes = []
        self._codes: dict[int, int] = {}
        self.sg = sg = fb.SubGraphT()
        sg.name, sg.tensors, sg.operators = "main", [], []

    def code(self, op: int, version: int = 1) -> int:
        """The operator code index of builtin `op` (its first use decides its version)."""
        if op not in self._codes:
            oc = fb.OperatorCodeT()
            oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = op, min(op, 127), version
            self._codes[op] = len(self.m.operatorCodes)
            self.m.operatorCodes.append(oc)
        return self._codes[op]

    def buffer(self, arr: np.ndarray) -> int:
        b = fb.BufferT()
        b.data = np.ascontiguousarray(arr).view(np.uint8).reshape(-1)
        self.m.buffers.append(b)
        return len(self.m.buffers) - 1

    def add(self, t: fb.TensorT) -> int:
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def op(self, code: int, inputs, outputs, opts_type: int = 0, opts=None) -> None:
        self.sg.operators.append(_op(code, inputs, outputs, opts_type, opts))

    def finish(self, x: int, y: int) -> bytes:
        """The model's bytes, input tensor `x` and output tensor `y`."""
        self.sg.inputs, self.sg.outputs = [x], [y]
        self.m.subgraphs = [self.sg]
        sig = fb.SignatureDefT()
        sig.signatureKey, sig.subgraphIndex = "serving_default", 0
        tin, tout = fb.TensorMapT(), fb.TensorMapT()
        tin.name, tin.tensorIndex, tout.name, tout.tensorIndex = "input", x, "output", y
        sig.inputs, sig.outputs = [tin], [tout]
        self.m.signatureDefs = [sig]
        return write_object(self.m)


def dense_weights(widths: list[int], seed: int = 0) -> list[tuple[np.ndarray, np.ndarray]]:
    """(W [out, in] float32, b [out]) per layer, scaled so activations stay O(1)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(len(widths) - 1):
        w = rng.standard_normal((widths[i + 1], widths[i]), dtype=np.float32)
        w *= np.float32(1.6 / np.sqrt(widths[i]))
        out.append((w, (0.05 * rng.standard_normal(widths[i + 1])).astype(np.float32)))
    return out


def _forward(layers, x: np.ndarray) -> list[np.ndarray]:
    acts = [x]
    for i, (w, b) in enumerate(layers):
        y = acts[-1] @ w.T + b
        acts.append(np.maximum(y, 0) if i < len(layers) - 1 else y)
    return acts


def dense_chain_model(widths: list[int], quantized: bool, seed: int = 0) -> bytes:
    """FULLY_CONNECTED chain (RELU between layers), float or int8 with float I/O.

    The int8 twin quantizes weights per channel (symmetric), biases to int32 with
    scale s_in*s_w, activations from a float run on random inputs (like a converter).
    """
    layers = dense_weights(widths, seed)
    mb = ModelBuilder("generated dense chain")
    add, buffer = mb.add, mb.buffer

    def code(op: int) -> int:
        return mb.code(op, 5 if op == BuiltinOperator.FULLY_CONNECTED and quantized else 1)

    acts = _forward(layers, np.random.default_rng(seed + 1).uniform(-1, 1, (8, widths[0])).astype(np.float32))
    aq = []
    for a in acts:
        lo, hi = min(float(a.min()), 0.0), max(float(a.max()), 0.0)
        s = max(hi - lo, 1e-6) / 255.0
        aq.append((s, int(np.clip(round(-128 - lo / s), -128, 127))))
    x = add(_tensor("input", [1, widths[0]], fb.TensorType.FLOAT32, 0))
    cur = x
    if quantized:
        cur = add(_tensor("input_int8", [1, widths[0]], fb.TensorType.INT8, 0, _quant(*aq[0])))
        mb.op(code(BuiltinOperator.QUANTIZE), [x], [cur])
    for i, (w, b) in enumerate(layers):
        last = i == len(layers) - 1
        fco = fb.FullyConnectedOptionsT()
        fco.fusedActivationFunction = fb.ActivationFunctionType.NONE if last else fb.ActivationFunctionType.RELU
        name = f"dense_{i}"
        if quantized:
            sw = np.maximum(np.abs(w).max(axis=1), 1e-8) / 127.0
            wq = np.clip(np.round(w / sw[:, None]), -127, 127).astype(np.int8)
            sb = aq[i][0] * sw
            bq = np.round(b / sb).astype(np.int32)
            wt = add(_tensor(f"{name}/kernel", w.shape, fb.TensorType.INT8, buffer(wq), _quant(sw, np.zeros_like(sw))))
            bt = add(_tensor(f"{name}/bias", b.shape, fb.TensorType.INT32, buffer(bq), _quant(sb, np.zeros_like(sb))))
            out = add(_tensor(f"{name}/out", [1, w.shape[0]], fb.TensorType.INT8, 0, _quant(*aq[i + 1])))
        else:
            wt = add(_tensor(f"{name}/kernel", w.shape, fb.TensorType.FLOAT32, buffer(w)))
            bt = add(_tensor(f"{name}/bias", b.shape, fb.TensorType.FLOAT32, buffer(b)))
            out = add(_tensor(f"{name}/out", [1, w.shape[0]], fb.TensorType.FLOAT32, 0))
        mb.op(code(BuiltinOperator.FULLY_CONNECTED), [cur, wt, bt], [out], fb.BuiltinOptions.FullyConnectedOptions, fco)
        cur = out
    if quantized:
        y = add(_tensor("output", [1, widths[-1]], fb.TensorType.FLOAT32, 0))
        mb.op(code(BuiltinOperator.DEQUANTIZE), [cur], [y])
        cur = y
    return mb.finish(x, cur)


BIG_WIDTHS = [4096, 4096, 4096, 4096, 4096, 1000]  # float: ~273 MB, int8 twin: ~69 MB
MEDIUM_WIDTHS = [3584, 3584]  # float: ~51 MB


class HostileCache:
    """Generated models cached by name in .fixture-cache/hostile-<hash of this file>/."""

    def __init__(self, root: Path = REPO / ".fixture-cache") -> None:
        key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
        self.dir = root / f"hostile-{key}"

    def path(self, name: str) -> Path:
        builders = {
            "big_float": lambda: dense_chain_model(BIG_WIDTHS, quantized=False),
            "big_int8": lambda: dense_chain_model(BIG_WIDTHS, quantized=True),
            "medium_float": lambda: dense_chain_model(MEDIUM_WIDTHS, quantized=False),
            "small_float": lambda: dense_chain_model([64, 32, 10], quantized=False),
            "small_int8": lambda: dense_chain_model([64, 32, 10], quantized=True),
        }
        return cached_model(self.dir / f"{name}.tflite", builders[name])
