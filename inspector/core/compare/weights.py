"""What the weight histogram shows: a constant tensor of model A against its twin in model B.

Both sides are turned into float64 values (dequantized when quantized, a dtype cast for
float16/float32) and compared with the one metric definition of `inspector.core.stats.metrics`.
Histogram bins are chosen so the quantization grid shows: for a per-tensor (or a single
channel's) grid of step S, each grid step is split into an odd number of sub-bins with a grid
point at the centre of the middle one, so dequantized values are spikes one step apart while
float values spread between them. Per-channel tensors use uniform bins centred on zero.

Large tensors are processed in column chunks (memory bounded); beyond `max_elements` a
deterministic subsample (contiguous blocks spread evenly, so a mapped multi-GB tensor is read
only where analysed) keeps every channel and the result says how many were used.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import numpy as np

from inspector.core.compare.equalized import reference_source
from inspector.core.quantmath.blockwise import (
    BlockwiseError,
    BlockwiseParams,
    blockwise_params,
    dequantize_blockwise,
)
from inspector.core.quantmath.float16 import Float16Accumulator, Float16Error
from inspector.core.quantmath.quant import dequantize, quantize
from inspector.core.stats.metrics import Metrics, TensorStats
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.fake_quant import FakeQuant, fake_quantized_constant
from inspector.core.tflite.model import Model, Op, Quantization, Subgraph, Tensor
from inspector.core.tflite.op_facts import FACTS, WEIGHT_DECODER_OPS

MAX_BINS = 4096
SUB_BINS = 5  # bins per grid step (odd: a grid point sits at the middle bin's centre)
UNIFORM_BINS = 256
MAX_ELEMENTS = 4_000_000  # beyond this a histogram is sampled (< 1 s on a 1.6 GB tensor)
CHUNK_ELEMENTS = 1_000_000
SAMPLE_BLOCK = 16_384  # values per sampled block (all channels together) when subsampling
MIN_SAMPLE_BLOCKS = 256  # blocks spread over the columns when subsampling


@dataclass(frozen=True, slots=True)
class WeightSource:
    """One side of a comparison: the values stored in the file and how to read them."""

    name: str
    dtype: str  # storage dtype: "int8", "int4", "float16", "float32", ...
    values: np.ndarray  # stored values (integers when quantized), shaped like the tensor
    quantization: Quantization | None
    label: str = ""
    # Blockwise weights: `values` are the stored integers, dequantized per block (chunk by chunk)
    # with these parameters; `quantization` is None.
    blockwise: BlockwiseParams | None = None

    @property
    def is_quantized(self) -> bool:
        return self.quantization is not None and self.dtype in INT_LIMITS

    @classmethod
    def from_tensor(cls, model: Model, tensor: Tensor, label: str = "") -> WeightSource | None:
        """None for tensors without constant numeric data (activations, strings).

        Raises BlockwiseError when blockwise parameters do not fit the tensor.
        """
        data = model.tensor_data(tensor)
        if data is None or data.dtype.kind not in "iuf":
            return None
        q = tensor.quantization if tensor.dtype in INT_LIMITS else None
        if q is not None and q.blockwise is not None:
            p = blockwise_params(model, tensor)
            return cls(tensor.name, tensor.dtype, data, None, label, p)
        return cls(tensor.name, tensor.dtype, data, q, label)

    def describe(self) -> str:
        if self.blockwise is not None:
            return f"{self.label} dequantized {self.dtype} per block of {self.blockwise.block_size}".strip()
        if self.quantization is not None and self.is_quantized:
            kind = "per-channel " if self.quantization.per_channel else ""
            return f"{self.label} dequantized {kind}{self.dtype}".strip()
        return f"{self.label} {self.dtype}".strip()


@dataclass(frozen=True)
class WeightAnalysis:
    """Everything the weight histogram and the per-channel error plot render."""

    a: WeightSource | None
    b: WeightSource | None
    edges: np.ndarray  # bin edges shared by both histograms (len n + 1)
    a_counts: np.ndarray | None  # counts of A's float values per bin
    b_counts: np.ndarray | None
    grid_step: float | None  # quantization step S when bins are aligned to the grid
    bins_per_step: int  # sub-bins per grid step (> 1: the grid is visible when zoomed)
    clip_lo: float | None  # representable float range of the quantized side (union over channels)
    clip_hi: float | None
    quant: Quantization | None  # of the quantized side (B preferred)
    quant_dtype: str | None
    channel: int | None  # selected channel, or None for the whole tensor
    channel_lo: np.ndarray | None  # representable range per channel
    channel_hi: np.ndarray | None
    metrics: Metrics | None  # B against A, over the analysed elements
    per_channel_sqnr_db: np.ndarray | None  # per channel of the quantized dimension
    per_channel_max_abs: np.ndarray | None
    total_elements: int
    used_elements: int  # < total_elements when subsampled
    notes: tuple[str, ...] = ()
    # The same counts in coarser bins (whole grid steps per bin) for the zoomed-out view, where
    # grid-resolved bins would be mostly empty spikes.
    coarse_edges: np.ndarray | None = None
    a_coarse: np.ndarray | None = None
    b_coarse: np.ndarray | None = None
    # B's float16 weights against A's float32 ones: rounding error in float16 ulps, overflow,
    # flush to zero, NaN (over the analysed elements); None unless B is float16 and A float.
    float16: Float16Error | None = None

    @property
    def sampled(self) -> bool:
        return self.used_elements < self.total_elements

    @property
    def centers(self) -> np.ndarray:
        mid: np.ndarray = 0.5 * (self.edges[:-1] + self.edges[1:])
        return mid

    @property
    def num_channels(self) -> int:
        if self.quant is None and self.blockwise is not None:
            return self.blockwise.scales.shape[0] if self.blockwise.scales.ndim >= 2 else 1
        return self.quant.num_channels if self.quant is not None else 1

    @property
    def blockwise(self) -> BlockwiseParams | None:
        """Block parameters of the blockwise side (B preferred), if any."""
        return next((s.blockwise for s in (self.b, self.a) if s is not None and s.blockwise is not None), None)


def float_values(src: WeightSource) -> np.ndarray:
    """All values of a source as float64 (dequantized r = S * (q - Z) along the quantized axis)."""
    if src.blockwise is not None:
        return dequantize_blockwise(src.values, src.blockwise)
    return _rows_to_tensor(_dequant_rows(src, _as_rows(src.values, _axis(src.quantization, src.values.ndim))), src)


def weight_tensor_of(sg: Subgraph, op: Op) -> int | None:
    """The op's weight tensor: its first constant input of rank >= 2 (else first constant input).

    Looks through DEQUANTIZE / DENSIFY, so float16 and sparse weights are found where stored,
    and through a fake quant (QUANTIZE → DEQUANTIZE of a constant: a QAT model's float twin), so
    the kernel is found there too (not the bias, the first constant the op reads directly).
    """
    producers = sg.producers()
    consts = []
    for i in op.inputs:
        if i < 0:
            continue
        fq = fake_quantized_constant(sg, i, producers)
        p = producers.get(i)
        if fq is not None:
            i = fq.source
        elif p is not None and p.type in WEIGHT_DECODER_OPS and p.inputs and p.inputs[0] >= 0:
            i = p.inputs[0]
        if sg.tensors[i].is_constant:
            consts.append(i)
    for i in consts:
        if len(sg.tensors[i].shape) >= 2:
            return i
    return consts[0] if consts else None


def layer_weights(sg: Subgraph, op: Op) -> int | None:
    """The weights of a layer (what selecting it shows in the Weights tab), or None when it has
    none. An op the fact table gives weights (CONV_2D, FULLY_CONNECTED, BATCH_MATMUL...) and an op
    it does not know (LSTMs, EMBEDDING_LOOKUP): `weight_tensor_of`. A value-moving op reading a
    constant table as its data (GATHER's params): that table. Any other known op has no weights:
    its constants are shapes, indices or element-wise operands (RESHAPE's shape vector, MUL's
    factor), which `constant_operands` lists; nor has an unknown op whose constant is a plain
    integer vector (MEAN's axes)."""
    f = FACTS.get(op.type)
    if f is not None and f.weights is not None:
        return weight_tensor_of(sg, op)
    if f is None:  # an op the table does not know: a constant it reads, unless a plain integer (MEAN's axes)
        t = weight_tensor_of(sg, op)
        return None if t is None or _plain_integer(sg.tensors[t]) else t
    first = op.inputs[0] if op.inputs else -1
    if f.same_scale and not f.shape_only and first >= 0 and sg.tensors[first].is_constant and len(sg.tensors[first].shape) >= 2:
        return first
    return None


def _plain_integer(t: Tensor) -> bool:
    """An integer tensor without quantization: a shape, axes or indices, never weights."""
    return t.quantization is None and t.dtype.startswith(("int", "uint"))


def constant_operands(sg: Subgraph, op: Op) -> list[Tensor]:
    """The constant inputs of `op` (shape vectors, indices, element-wise factors, weights)."""
    return [sg.tensors[i] for i in op.inputs if i >= 0 and sg.tensors[i].is_constant]


def weight_fake_quant(sg: Subgraph, op: Op) -> FakeQuant | None:
    """The fake quant between the op's weight (`weight_tensor_of`) and the op, when the weight
    reaches the op through one (a QAT model's float twin), else None."""
    ti = weight_tensor_of(sg, op)
    if ti is None:
        return None
    producers = sg.producers()
    for i in op.inputs:
        fq = fake_quantized_constant(sg, i, producers) if i >= 0 else None
        if fq is not None and fq.source == ti:
            return fq
    return None


def fake_quantized(src: WeightSource, q: Quantization, dtype: str) -> WeightSource:
    """The float values `src` takes after a fake quant with `q` (stored as `dtype` between the
    QUANTIZE and the DEQUANTIZE): S·(clamp(round(x / S) + Z) − Z), what the op really reads."""
    ints = quantize(np.asarray(src.values, np.float64), q, dtype)
    values = dequantize(ints, q).astype(np.float32)
    return WeightSource(src.name, "float32", values, None, src.label)


def analyze_tensors(
    model_a: Model | None,
    tensor_a: Tensor | None,
    model_b: Model | None,
    tensor_b: Tensor | None,
    channel: int | None = None,
    max_elements: int = MAX_ELEMENTS,
) -> WeightAnalysis | None:
    """Analysis of a tensor pair (either side may be missing); None when neither has data."""
    problems: list[str] = []

    def source(model: Model | None, tensor: Tensor | None, label: str) -> WeightSource | None:
        if not model or not tensor:
            return None
        try:
            return WeightSource.from_tensor(model, tensor, label)
        except BlockwiseError as e:
            problems.append(f"model {label}: {e}; not shown")
            return None

    a, b = source(model_a, tensor_a, "A"), source(model_b, tensor_b, "B")
    a = reference_source(model_b, tensor_b, a, problems)  # B equalized: A's weights ÷/× s, said in the notes
    if a is None and b is None:
        return None
    out = analyze_weights(a, b, channel=channel, max_elements=max_elements)
    return replace(out, notes=out.notes + tuple(problems)) if problems else out


def analyze_weights(
    a: WeightSource | None,
    b: WeightSource | None,
    channel: int | None = None,
    max_elements: int = MAX_ELEMENTS,
) -> WeightAnalysis:
    """Histograms, clipping range and errors of B against A (A is the float reference)."""
    if a is None and b is None:
        raise ValueError("analyze_weights needs at least one side")
    if channel is not None and _blockwise_rows(a, b) is not None:
        return _blockwise_channel(a, b, channel, max_elements)
    notes: list[str] = []
    qsrc = b if b is not None and b.is_quantized else a if a is not None and a.is_quantized else None
    q = qsrc.quantization if qsrc else None
    compare = a is not None and b is not None
    if a is not None and b is not None and a.values.shape != b.values.shape:
        notes.append(f"shapes differ (A {list(a.values.shape)}, B {list(b.values.shape)}): no error metrics")
        compare = False
    ref = qsrc or b or a
    assert ref is not None  # one side at least (checked above)
    axis = _axis(q, ref.values.ndim)
    if channel is not None and axis is None:
        channel = None
    if channel is not None and q is not None and not 0 <= channel < q.num_channels:  # a channel axis: q is set
        raise ValueError(f"channel {channel} out of range (tensor has {q.num_channels} channels)")
    ref_shape = ref.values.shape
    pa, pb = _processable(a, axis, ref_shape), _processable(b, axis, ref_shape)
    rows_a, rows_b = _rows(pa, axis, ref_shape, channel), _rows(pb, axis, ref_shape, channel)
    total = next(r for r in (rows_b, rows_a) if r is not None).size
    step = max(1, math.ceil(total / max_elements))
    if step > 1:
        notes.append(f"large tensor: about 1 value in {step} analysed, in contiguous blocks spread evenly over "
                     f"each channel ({total:,} values in all)")
    cq = _channel_quant(q, channel)
    ranges = [_value_range(s, r, channel, step) for s, r in ((pa, rows_a), (pb, rows_b)) if s is not None and r is not None]
    edges, grid, sub = _edges([r for r in ranges if r is not None], cq)
    a_counts = b_counts = metrics = per_sqnr = per_max = f16 = None
    used = 0
    if compare and _float16_pair(a, b):
        f16 = Float16Accumulator()
    if compare:
        assert rows_a is not None and rows_b is not None  # both sides (rows are None only without a side)
        stats = _stats(cq, qsrc, b)
        ch_max = np.zeros(rows_a.shape[0])
        a_counts, b_counts = np.zeros(len(edges) - 1, np.int64), np.zeros(len(edges) - 1, np.int64)
        rows_of = _out_channels(pa, pb, rows_a, channel)  # blockwise: per output channel sums of a flat layout
        n_out = ref_shape[0] if rows_of is not None else 0
        sx2, se2, emax, seen = np.zeros(n_out), np.zeros(n_out), np.zeros(n_out), np.zeros(n_out, np.int64)
        for cols in _chunks(rows_a.shape[1], rows_a.shape[0], step):
            xa = _dequant_rows(pa, rows_a[:, cols], channel, cols)
            xb = _dequant_rows(pb, rows_b[:, cols], channel, cols)
            used += xa.size
            a_counts += _hist(xa, edges)
            b_counts += _hist(xb, edges)
            stats.update(xa, xb)
            if f16 is not None:
                f16.update(xa, xb)
            if xa.size:
                ch_max = np.maximum(ch_max, np.max(np.abs(xa - xb), axis=1))
                if rows_of is not None:
                    o = rows_of(cols)
                    e = (xa - xb).ravel()
                    sx2 += np.bincount(o, weights=xa.ravel() ** 2, minlength=n_out)
                    se2 += np.bincount(o, weights=e * e, minlength=n_out)
                    np.maximum.at(emax, o, np.abs(e))
                    seen += np.bincount(o, minlength=n_out)
        metrics = stats.result()
        if rows_of is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                per_sqnr = np.where(se2 == 0, np.inf, 10 * np.log10(sx2 / se2))
            # channels the subsample did not reach have no figure (NaN), not "exact" (+inf)
            per_sqnr = np.where(seen == 0, np.nan, per_sqnr)
            per_max = np.where(seen == 0, np.nan, emax)
        if q is not None and q.per_channel and channel is None:
            per_sqnr = np.asarray(metrics.per_channel_sqnr_db, np.float64)
            per_max = ch_max
    else:
        if pa is not None and rows_a is not None:
            a_counts, used = _hist_side(pa, rows_a, channel, edges, step)
        if pb is not None and rows_b is not None:
            b_counts, used = _hist_side(pb, rows_b, channel, edges, step)
    lo_c = hi_c = None
    clip_lo = clip_hi = None
    if q is not None and qsrc is not None:
        lo_c, hi_c = _rep_range(q, qsrc.dtype)
        sel = slice(None) if channel is None else slice(channel, channel + 1)
        clip_lo, clip_hi = float(lo_c[sel].min()), float(hi_c[sel].max())
    if a is not None and b is None:
        notes.append("model A alone: no counterpart to compare with")
    elif b is not None and a is None:
        notes.append("model B alone: no float counterpart to compare with")
    if qsrc is None and b is not None and b.dtype == "float16":
        notes.append("float16 weights: dequantized by a dtype cast")
    bw_src = next((s for s in (b, a) if s is not None and s.blockwise is not None), None)
    if bw_src is not None:
        p = bw_src.blockwise
        assert p is not None  # picked for its blockwise parameters
        lo_s, hi_s = p.scale_range
        notes.append(f"{bw_src.label} {bw_src.dtype} blockwise: {p.num_blocks:,} blocks of {p.block_size} "
                     f"({p.blocks_per_row} per output channel), block scales {lo_s:.4g} … {hi_s:.4g}; "
                     "dequantized per block, S[o, i // B]·(q − Z)")  # fmt: skip
    group = _coarse_group(len(edges) - 1, sub, used)
    coarse_edges = edges[0] + (edges[1] - edges[0]) * group * np.arange(math.ceil((len(edges) - 1) / group) + 1)
    return WeightAnalysis(
        coarse_edges=coarse_edges, a_coarse=_coarsen(a_counts, group), b_coarse=_coarsen(b_counts, group),
        a=a, b=b, edges=edges, a_counts=a_counts, b_counts=b_counts,
        grid_step=grid, bins_per_step=sub, clip_lo=clip_lo, clip_hi=clip_hi,
        quant=q, quant_dtype=qsrc.dtype if qsrc else None, channel=channel,
        channel_lo=lo_c, channel_hi=hi_c, metrics=metrics,
        per_channel_sqnr_db=per_sqnr, per_channel_max_abs=per_max,
        total_elements=total, used_elements=used, notes=tuple(notes),
        float16=None if f16 is None else f16.result(),
    )  # fmt: skip


# --------------------------------------------------------------------------- helpers
def _float16_pair(a: WeightSource | None, b: WeightSource | None) -> bool:
    """B stores float16 weights and A float ones: the float16 rounding error is measured."""
    return (a is not None and b is not None and b.dtype == "float16" and not a.is_quantized
            and a.blockwise is None and a.dtype in ("float32", "float64"))  # fmt: skip


def _blockwise_rows(a: WeightSource | None, b: WeightSource | None) -> int | None:
    """Output channels of a blockwise pair with no per-channel side (None: not such a pair)."""
    srcs = [s for s in (a, b) if s is not None]
    if not any(s.blockwise is not None for s in srcs) or any(s.is_quantized for s in srcs):
        return None
    shapes = {s.values.shape for s in srcs}
    shape = shapes.pop()
    return shape[0] if not shapes and len(shape) >= 2 else None


def _row_source(src: WeightSource | None, c: int) -> WeightSource | None:
    """Output channel `c` of a source, its block parameters cut to that row."""
    if src is None:
        return None
    p = src.blockwise
    if p is not None:
        zp = None if p.zero_points is None else p.zero_points[c : c + 1]
        p = replace(p, scales=p.scales[c : c + 1], zero_points=zp)
    return replace(src, values=src.values[c : c + 1], blockwise=p)


def _blockwise_channel(a: WeightSource | None, b: WeightSource | None, channel: int, max_elements: int) -> WeightAnalysis:
    """One output channel of blockwise weights: its row alone, dequantized with its own blocks."""
    n = _blockwise_rows(a, b)
    assert n is not None  # called for blockwise weights only
    if not 0 <= channel < n:
        raise ValueError(f"channel {channel} out of range (tensor has {n} output channels)")
    out = analyze_weights(_row_source(a, channel), _row_source(b, channel), None, max_elements)
    return replace(out, a=a, b=b, channel=channel, per_channel_sqnr_db=None, per_channel_max_abs=None,
                   notes=(f"output channel {channel} of {n}",) + out.notes)  # fmt: skip


def _out_channels(pa: WeightSource | None, pb: WeightSource | None, rows: np.ndarray | None,
                  channel: int | None) -> Callable[[slice | np.ndarray], np.ndarray] | None:
    """For a blockwise side laid out flat (one row): column indexes -> output channel (dimension 0)."""
    src = next((x for x in (pb, pa) if x is not None and x.blockwise is not None), None)
    if src is None or rows is None or rows.shape[0] != 1 or channel is not None or src.values.ndim < 2:
        return None
    per = src.values.size // src.values.shape[0]
    width = rows.shape[1]
    return lambda cols: np.arange(width)[cols] // per


def _axis(q: Quantization | None, ndim: int) -> int | None:
    if q is None or not q.per_channel or ndim == 0:
        return None
    return q.quantized_dimension


def _as_rows(v: np.ndarray, axis: int | None) -> np.ndarray:
    """(C, M) view/copy: channels of the quantized axis as rows (C = 1 without one)."""
    if axis is None:
        return v.reshape(1, -1)
    return np.moveaxis(v, axis, 0).reshape(v.shape[axis], -1)


def _rows_to_tensor(rows: np.ndarray, src: WeightSource) -> np.ndarray:
    axis = _axis(src.quantization, src.values.ndim)
    if axis is None:
        return rows.reshape(src.values.shape)
    moved = list(src.values.shape)
    moved.insert(0, moved.pop(axis))
    return np.moveaxis(rows.reshape(moved), 0, axis)


def _layout(src: WeightSource, axis: int | None, ref_shape: tuple[int, ...]) -> int | None:
    """The channel axis a side is laid out along: the reference's, when the shapes agree."""
    return axis if src.values.shape == ref_shape else None


def _processable(src: WeightSource | None, axis: int | None, ref_shape: tuple[int, ...]) -> WeightSource | None:
    """A per-channel side quantized along another axis is dequantized up front (rare: mixed schemes),
    so is a blockwise side laid out per channel (its blocks are dequantized by flat position)."""
    if src is None:
        return None
    if src.blockwise is not None and _layout(src, axis, ref_shape) is not None:
        return WeightSource(src.name, "float64", float_values(src), None, src.label)
    own = _axis(src.quantization, src.values.ndim) if src.is_quantized else None
    if own is not None and own != _layout(src, axis, ref_shape):
        return WeightSource(src.name, "float64", float_values(src), None, src.label)
    return src


def _rows(src: WeightSource | None, axis: int | None, ref_shape: tuple[int, ...], channel: int | None) -> np.ndarray | None:
    if src is None:
        return None
    lay = _layout(src, axis, ref_shape)
    rows = _as_rows(src.values, lay)
    if channel is not None and lay is not None:
        rows = rows[channel : channel + 1]
    return rows


def _channel_quant(q: Quantization | None, channel: int | None) -> Quantization | None:
    if q is None or channel is None or not q.per_channel:
        return q
    return Quantization((q.scales[channel],), (q.zero_points[channel],), 0)


def _dequant_rows(src: WeightSource | None, rows: np.ndarray, channel: int | None = None,
                  cols: slice | np.ndarray | None = None) -> np.ndarray:  # fmt: skip
    """Float64 values of `rows` (columns `cols` of the source's row layout: a slice or indices)."""
    if src is None:
        raise ValueError("no source")
    x = rows.astype(np.float64)
    if src.blockwise is not None:  # flat layout (one row): block of flat index j is j // B
        p = src.blockwise
        flat = np.arange(src.values.size)
        j = (flat if cols is None else flat[cols]) // p.block_size
        if p.zero_points is not None:
            x = x - p.zero_points.ravel()[j]
        scaled: np.ndarray = x * p.scales.ravel()[j]
        return scaled
    if not src.is_quantized:
        return x
    q = _channel_quant(src.quantization, channel)
    assert q is not None  # is_quantized: the source has quantization parameters
    s = np.asarray(q.scales, np.float64)[:, None]
    z = np.asarray(q.zero_points, np.float64)[:, None]
    if s.shape[0] != x.shape[0]:  # per-tensor params over a 1-row layout
        s, z = s[:1], z[:1]
    return (x - z) * s


def _rep_range(q: Quantization, dtype: str) -> tuple[np.ndarray, np.ndarray]:
    qmin, qmax = INT_LIMITS[dtype]
    s, z = np.asarray(q.scales, np.float64), np.asarray(q.zero_points, np.float64)
    return s * (qmin - z), s * (qmax - z)


def _chunks(ncols: int, nrows: int, step: int) -> Iterator[slice | np.ndarray]:
    """Column slices to analyse: all of them in chunks, or (step > 1) about 1/step of them as
    contiguous blocks spread evenly over each row. A stride would read every page of a mapped
    multi-GB tensor; blocks read only what is analysed."""
    if step == 1:
        per = max(1, CHUNK_ELEMENTS // max(nrows, 1))
        for start in range(0, ncols, per):
            yield slice(start, min(ncols, start + per))
        return
    want = -(-ncols // step)
    # at least MIN_SAMPLE_BLOCKS blocks, so a flat (one-row) layout is sampled over its whole length
    width = max(1, min(want // MIN_SAMPLE_BLOCKS or 1, SAMPLE_BLOCK // max(nrows, 1)))
    starts = np.unique(np.linspace(0, ncols - width, -(-want // width)).round().astype(np.int64))
    group = max(1, CHUNK_ELEMENTS // max(nrows, 1) // width)  # blocks gathered per chunk
    for k in range(0, len(starts), group):
        yield (starts[k : k + group, None] + np.arange(width)).reshape(-1)  # column indices


def _value_range(src: WeightSource, rows: np.ndarray, channel: int | None, step: int) -> tuple[float, float] | None:
    """(min, max) of a side's float values, from the stored extremes per row (cheap for ints)."""
    if rows.size == 0:
        return None
    if src.blockwise is not None:  # extremes of the dequantized values, chunk by chunk
        lo, hi = math.inf, -math.inf
        for cols in _chunks(rows.shape[1], rows.shape[0], step):
            x = _dequant_rows(src, rows[:, cols], None, cols)
            if x.size:
                lo, hi = min(lo, float(x.min())), max(hi, float(x.max()))
        return (lo, hi) if lo <= hi else None
    if step > 1:
        parts = [rows[:, s] for s in _chunks(rows.shape[1], rows.shape[0], step)]
        r = np.concatenate([np.concatenate([p.min(axis=1, keepdims=True), p.max(axis=1, keepdims=True)], axis=1)
                            for p in parts], axis=1)  # fmt: skip
    else:
        r = rows
    if src.is_quantized:
        rlo = _dequant_rows(src, r.min(axis=1, keepdims=True), channel)
        rhi = _dequant_rows(src, r.max(axis=1, keepdims=True), channel)
        return float(np.min(np.minimum(rlo, rhi))), float(np.max(np.maximum(rlo, rhi)))
    fin = r[np.isfinite(r)]
    return (float(fin.min()), float(fin.max())) if fin.size else None


def _edges(ranges: list[tuple[float, float]], cq: Quantization | None) -> tuple[np.ndarray, float | None, int]:
    """Bin edges, the grid step they are aligned to (or None) and sub-bins per grid step."""
    lo = min((r[0] for r in ranges), default=0.0)
    hi = max((r[1] for r in ranges), default=0.0)
    if cq is not None and not cq.per_channel and cq.scales[0] > 0:
        s, z = float(cq.scales[0]), float(cq.zero_points[0])
        q_lo, q_hi = math.floor(lo / s + z) - 1, math.ceil(hi / s + z) + 1
        levels = q_hi - q_lo + 1
        e0 = s * (q_lo - z) - 0.5 * s
        for sub in (SUB_BINS, 3, 1):
            if levels * sub <= MAX_BINS:
                return e0 + (s / sub) * np.arange(levels * sub + 1), s, sub
        group = math.ceil(levels / MAX_BINS)  # grid too fine to show: whole steps per bin
        return e0 + group * s * np.arange(math.ceil(levels / group) + 1), s, 1
    if hi <= lo:  # a constant tensor (e.g. all-zero bias): give the bins some width
        pad = max(abs(lo) * 0.01, float(min(cq.scales)) if cq is not None else 0.0, 1e-6)
        lo, hi = lo - pad, hi + pad
    if cq is not None and cq.per_channel:
        w = float(np.median(cq.scales)) / SUB_BINS
        if w <= 0 or (hi - lo) / w > MAX_BINS:
            w = max(hi - lo, 1e-12) / MAX_BINS
        k0, k1 = math.floor(lo / w - 0.5), math.ceil(hi / w + 0.5)
        return (np.arange(k0, k1 + 1) + 0.5) * w, None, 1
    return np.linspace(lo, hi, UNIFORM_BINS + 1), None, 1


def _coarse_group(nbins: int, sub: int, n: int) -> int:
    """Fine bins per coarse bin: a whole number of grid steps, about 2·(2·n^(1/3)) bins in all."""
    target = int(np.clip(4 * max(n, 1) ** (1 / 3), 16, 160))
    steps = max(1, math.ceil(nbins / sub / target))
    return steps * sub


def _coarsen(counts: np.ndarray | None, group: int) -> np.ndarray | None:
    if counts is None:
        return None
    pad = (-len(counts)) % group
    coarse: np.ndarray = np.concatenate([counts, np.zeros(pad, counts.dtype)]).reshape(-1, group).sum(axis=1)
    return coarse


def _hist_side(src: WeightSource, rows: np.ndarray, channel: int | None, edges: np.ndarray, step: int) -> tuple[np.ndarray, int]:
    counts = np.zeros(len(edges) - 1, np.int64)
    used = 0
    for cols in _chunks(rows.shape[1], rows.shape[0], step):
        x = _dequant_rows(src, rows[:, cols], channel, cols)
        counts += _hist(x, edges)
        used += x.size
    return counts, used


def _hist(x: np.ndarray, edges: np.ndarray) -> np.ndarray:
    v = x.ravel()
    if not np.all(np.isfinite(v)):
        v = v[np.isfinite(v)]
    return np.histogram(v, bins=len(edges) - 1, range=(float(edges[0]), float(edges[-1])))[0]


def _stats(cq: Quantization | None, qsrc: WeightSource | None, b: WeightSource | None) -> TensorStats:
    if cq is None or qsrc is None or qsrc is not b:
        return TensorStats(channel_axis=0)
    lo, hi = _rep_range(cq, qsrc.dtype)
    s = np.asarray(cq.scales, np.float64)
    return TensorStats(scale=s, lo=lo, hi=hi, quant_axis=0, channel_axis=0)
