"""A generated 1,500-op residual pair for the GUI-at-scale tests (no TensorFlow: built with the
LiteRT flatbuffer object API in a fraction of a second, cached in `.fixture-cache/many-<key>/`).

`residual_pair(root, blocks)`: float A and int8 B of `blocks` residual blocks on an 8-wide
vector, each block three ops: h = FULLY_CONNECTED(x) (a random rotation), s = ADD(x, h),
x' = MUL(s, k) (k keeps the norm near 1, found from a float run), so 500 blocks are 1,500 ops
plus B's QUANTIZE and DEQUANTIZE. The int8 twin is calibrated like a converter (activation
ranges from a float run on random inputs, weights symmetric per channel), except that block
`bad_block`'s FC output range is cut to a tenth: a clipping layer, the worst region a view must
show. The shapes are those of a real residual stack (a tensor read by two ops, long chains).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
from ai_edge_litert import schema_py_generated as fb

from tests.helpers.cache import cached_model
from tests.helpers.hostile_fixtures import ModelBuilder, _quant, _tensor

BuiltinOperator = fb.BuiltinOperator
WIDTH = 8


def _weights(blocks: int, seed: int) -> tuple[list[np.ndarray], list[float], list[list[np.ndarray]]]:
    rng = np.random.default_rng(seed)
    ws = []
    for _ in range(blocks):
        q, _r = np.linalg.qr(rng.standard_normal((WIDTH, WIDTH)))
        ws.append((0.6 * q).astype(np.float32))
    x = rng.uniform(-1, 1, (16, WIDTH)).astype(np.float32)
    ks, acts = [], []
    for w in ws:  # the float forward pass: k per block, and every tensor for the ranges
        h = x @ w.T
        s = x + h
        k = float(np.float32(1.0 / max(np.sqrt((s**2).mean()) / np.sqrt((x**2).mean()), 1e-6)))
        ks.append(k)
        y = (s * np.float32(k)).astype(np.float32)
        acts.append([x, h, s, y])
        x = y
    return ws, ks, acts


def _range(a: np.ndarray, cut: float = 1.0) -> tuple[float, int]:
    lo, hi = min(float(a.min()) * cut, 0.0), max(float(a.max()) * cut, 0.0)
    s = max(hi - lo, 1e-6) / 255.0
    return s, int(np.clip(round(-128 - lo / s), -128, 127))


def residual_model(blocks: int, quantized: bool, seed: int = 3, bad_block: int | None = None) -> bytes:
    ws, ks, acts = _weights(blocks, seed)
    mb = ModelBuilder("generated residual stack")
    add, buffer, code = mb.add, mb.buffer, mb.code

    f32, i8 = fb.TensorType.FLOAT32, fb.TensorType.INT8
    shape = [1, WIDTH]
    x = add(_tensor("input", shape, f32, 0))
    cur = x
    if quantized:
        cur = add(_tensor("input_int8", shape, i8, 0, _quant(*_range(acts[0][0]))))
        mb.op(code(BuiltinOperator.QUANTIZE), [x], [cur])
    cur_q = _range(acts[0][0])
    for i, (w, k) in enumerate(zip(ws, ks, strict=True)):
        _x, h, s, y = acts[i]
        fco = fb.FullyConnectedOptionsT()
        fco.fusedActivationFunction = fb.ActivationFunctionType.NONE
        aao, mmo = fb.AddOptionsT(), fb.MulOptionsT()
        name = f"block_{i}"
        if quantized:
            sw = np.maximum(np.abs(w).max(axis=1), 1e-8) / 127.0
            wq = np.clip(np.round(w / sw[:, None]), -127, 127).astype(np.int8)
            bias = np.zeros(WIDTH, np.float32)
            sb = cur_q[0] * sw
            wt = add(_tensor(f"{name}/kernel", w.shape, i8, buffer(wq), _quant(sw, np.zeros_like(sw))))
            bt = add(_tensor(f"{name}/bias", [WIDTH], fb.TensorType.INT32, buffer(np.round(bias / sb).astype(np.int32)),
                             _quant(sb, np.zeros_like(sb))))
            hq = _range(h, 0.1 if i == bad_block else 1.0)
            ht = add(_tensor(f"{name}/fc", shape, i8, 0, _quant(*hq)))
            st = add(_tensor(f"{name}/add", shape, i8, 0, _quant(*_range(s))))
            kt = add(_tensor(f"{name}/k", [1], i8, buffer(np.array([127], np.int8)), _quant(k / 127.0, 0)))
            yq = _range(y)
            yt = add(_tensor(f"{name}/out", shape, i8, 0, _quant(*yq)))
            fc_code, add_code, mul_code = code(BuiltinOperator.FULLY_CONNECTED, 5), code(BuiltinOperator.ADD, 2), code(BuiltinOperator.MUL, 2)
            cur_q = yq
        else:
            wt = add(_tensor(f"{name}/kernel", w.shape, f32, buffer(w)))
            bt = add(_tensor(f"{name}/bias", [WIDTH], f32, buffer(np.zeros(WIDTH, np.float32))))
            ht = add(_tensor(f"{name}/fc", shape, f32, 0))
            st = add(_tensor(f"{name}/add", shape, f32, 0))
            kt = add(_tensor(f"{name}/k", [1], f32, buffer(np.array([k], np.float32))))
            yt = add(_tensor(f"{name}/out", shape, f32, 0))
            fc_code, add_code, mul_code = code(BuiltinOperator.FULLY_CONNECTED), code(BuiltinOperator.ADD), code(BuiltinOperator.MUL)
        mb.op(fc_code, [cur, wt, bt], [ht], fb.BuiltinOptions.FullyConnectedOptions, fco)
        mb.op(add_code, [cur, ht], [st], fb.BuiltinOptions.AddOptions, aao)
        mb.op(mul_code, [st, kt], [yt], fb.BuiltinOptions.MulOptions, mmo)
        cur = yt
    if quantized:
        out = add(_tensor("output", shape, f32, 0))
        mb.op(code(BuiltinOperator.DEQUANTIZE), [cur], [out])
        cur = out
    return mb.finish(x, cur)


BLOCKS = 500  # 1,500 ops (B: 1,502 with its QUANTIZE and DEQUANTIZE)
BAD_BLOCK = 300  # B's op 1 + 3 * 300 = 901 (the FC of block 300) clips


def residual_pair(root: Path, blocks: int = BLOCKS, bad_block: int = BAD_BLOCK) -> tuple[Path, Path]:
    """(float A, int8 B) of `blocks` residual blocks, built on first use under `root`."""
    key = hashlib.sha256(Path(__file__).read_bytes() + Path(_tensor.__code__.co_filename).read_bytes()).hexdigest()[:12]
    d = root / f"many-{key}"
    a = cached_model(d / f"residual{blocks}_float.tflite", lambda: residual_model(blocks, False))
    b = cached_model(d / f"residual{blocks}_int8_bad{bad_block}.tflite", lambda: residual_model(blocks, True, bad_block=bad_block))
    return a, b
