"""Blockwise weights: one scale (and zero point) per block of `block_size` inputs.

litert-quantizer's BLOCKWISE_32..256 weights are int4 (or int2 / int8) [out, in] tensors whose
scales are a float16 tensor of shape [out, in / block_size]: r[o, i] = S[o, i // B] * (q[o, i] -
Z[o, i // B]), Z = 0 when the details name no zero-point tensor. Blocks run along the last
(input) axis; every leading axis is a row. Inconsistent parameters (a scale tensor of the wrong
shape, a block size that does not divide the input dimension) are reported, never guessed at.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.core.tflite.model import Model, Tensor


@dataclass(frozen=True)
class BlockwiseParams:
    """The per-block parameters of one blockwise tensor, read from its scale tensor."""

    block_size: int
    scales: np.ndarray  # float64, shape = tensor.shape[:-1] + (blocks_per_row,)
    zero_points: np.ndarray | None  # int64 like `scales`, None when symmetric (Z = 0)
    scale_tensor: str
    zero_point_tensor: str | None

    @property
    def blocks_per_row(self) -> int:
        return int(self.scales.shape[-1]) if self.scales.ndim else 1

    @property
    def num_blocks(self) -> int:
        return int(self.scales.size)

    @property
    def scale_range(self) -> tuple[float, float]:
        return float(self.scales.min()), float(self.scales.max())


class BlockwiseError(ValueError):
    """The blockwise parameters of a tensor do not fit it (the message says how)."""


def blockwise_problems(model: Model, tensor: Tensor) -> list[tuple[str, str, object, object]]:
    """What is wrong with a tensor's blockwise parameters: (kind, message, observed, expected).

    kind is "block-size", "scale-tensor", "scale-shape", "zero-point-tensor" or "zero-point-shape";
    the list is empty when the parameters are consistent.
    """
    q = tensor.quantization
    if q is None or q.blockwise is None:
        return []
    bw = q.blockwise
    sg = model.subgraphs[tensor.subgraph]
    if not tensor.shape:
        return [("block-size", "a blockwise tensor needs at least one dimension", [], "rank >= 1")]
    out: list[tuple[str, str, object, object]] = []
    n_in = tensor.shape[-1]
    if bw.block_size <= 0 or n_in % bw.block_size:
        out.append(("block-size", f"block size {bw.block_size} does not divide the input dimension {n_in}",
                    bw.block_size, f"a divisor of {n_in}"))  # fmt: skip
    want = list(tensor.shape[:-1]) + [n_in // bw.block_size if bw.block_size > 0 else 0]
    for label, ti in (("scale", bw.scale_tensor), ("zero-point", bw.zero_point_tensor)):
        if ti < 0 and label == "zero-point":
            continue
        if not 0 <= ti < len(sg.tensors):
            out.append((f"{label}-tensor", f"its {label} tensor {ti} does not exist", ti, f"< {len(sg.tensors)}"))
            continue
        t = sg.tensors[ti]
        if not t.is_constant or t.sparsity is not None:
            out.append((f"{label}-tensor", f"its {label} tensor '{t.name}' holds no dense constant data", t.name, "a dense constant"))
        elif list(t.shape) != want:
            out.append((f"{label}-shape", f"its {label} tensor '{t.name}' has shape {list(t.shape)}, expected {want} "
                        "([out, in / block size])", list(t.shape), want))  # fmt: skip
        elif label == "scale" and t.dtype not in ("float16", "float32", "bfloat16"):
            out.append(("scale-tensor", f"its scale tensor '{t.name}' is {t.dtype}, not a float type", t.dtype, "float16 / float32"))
        elif label == "scale":
            s = _float_values(model, t)
            bad = int(np.count_nonzero(~np.isfinite(s) | (s < 0)))
            if bad:
                out.append(("scale-values", f"its scale tensor '{t.name}' holds {bad} negative or non-finite scale(s)",
                            bad, "finite scales >= 0"))  # fmt: skip
    return out


def blockwise_params(model: Model, tensor: Tensor) -> BlockwiseParams:
    """The per-block scales (float64) and zero points of a blockwise tensor.

    Raises BlockwiseError naming the problem when the parameters do not fit the tensor.
    """
    q = tensor.quantization
    if q is None or q.blockwise is None:
        raise BlockwiseError(f"tensor '{tensor.name}' is not blockwise quantized")
    problems = blockwise_problems(model, tensor)
    if problems:
        raise BlockwiseError(f"tensor '{tensor.name}': " + "; ".join(p[1] for p in problems))
    bw = q.blockwise
    sg = model.subgraphs[tensor.subgraph]
    st = sg.tensors[bw.scale_tensor]
    scales = _float_values(model, st)
    zps = None
    zname = None
    if bw.zero_point_tensor >= 0:
        zt = sg.tensors[bw.zero_point_tensor]
        data = model.tensor_data(zt)
        if data is None:
            raise BlockwiseError(f"tensor '{tensor.name}': its zero-point tensor '{zt.name}' has no readable data")
        zps = np.asarray(data).astype(np.int64)
        zname = zt.name
    return BlockwiseParams(bw.block_size, scales, zps, st.name, zname)


def _float_values(model: Model, t: Tensor) -> np.ndarray:
    if t.dtype == "bfloat16":  # no numpy dtype: the upper half of a float32
        raw = model.buffer_bytes(t.buffer).view(np.uint16).astype(np.uint32) << 16
        return raw.view(np.float32).astype(np.float64).reshape(t.shape)
    data = model.tensor_data(t)
    if data is None:
        raise BlockwiseError(f"scale tensor '{t.name}' has no readable data")
    return np.asarray(data).astype(np.float64)


def dequantize_blockwise(values: np.ndarray, p: BlockwiseParams) -> np.ndarray:
    """r = S[..., i // B] * (q[..., i] - Z[..., i // B]) as float64, shaped like `values`."""
    v = np.asarray(values)
    n_in = v.shape[-1]
    blocks = v.reshape(v.shape[:-1] + (n_in // p.block_size, p.block_size)).astype(np.float64)
    if p.zero_points is not None:
        blocks = blocks - p.zero_points[..., None]
    r: np.ndarray = (blocks * p.scales[..., None]).reshape(v.shape)
    return r


