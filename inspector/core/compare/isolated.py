"""Isolated (per-layer) error: each float op fed the dequantized inputs its quantized twin saw.

One float model is built (and cached) from the float file: every matched compute op is kept,
and each of its activation inputs (non-constant, non-variable) is replaced by a value of the
quantized model. The isolated model takes B's tensors as they are (int8, uint8 or int16, with
B's scale and zero point) and dequantizes them inside, one DEQUANTIZE per B tensor however many
ops read it: one invoke per sample then computes every layer's isolated float output from B's
raw buffers, with no dequantization in numpy (float inputs, as in hybrid or float16 models, are
passed as they are; B constants at an activation position become constants of the isolated
model). This is the comparison TensorFlow's QuantizationDebugger reports per layer.

Ops that only compute integers (shapes and indices: SHAPE, GATHER/PACK/REDUCE_PROD of shapes,
a token mask) are not cut out: they have no quantization error of their own, and the shapes
they would be fed are the isolated model's own business. Their consumers take B's values of
those integers as they take any input.

The isolated model's interpreter (`IsolatedRunner`) is made at the first sample, with its inputs
sized as B's values are before the runtime plans them: a shape-computing float model (a Keras
Dense on a 3-D input: SHAPE/GATHER/PACK feeding RESHAPE) records placeholder shapes such as
[1, 1] for the tensors those shapes produce, which XNNPACK would otherwise plan and then fail to
reshape. A refusal names the isolated model, not the user's float file.
A float twin that keeps fake quantization (a QAT model's) keeps it in the isolated model too: a
kernel's QUANTIZE → DEQUANTIZE runs before the op, and the output's after it (its DEQUANTIZE
output is read).

Ops that cannot be cut out this way (control flow, resource variables, custom ops, inputs whose
shapes differ between the models) keep `isolated = null`, with the reason in `notes`.
"""

from __future__ import annotations

import copy
import operator
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.compare.equalized import rescale_float_weights
from inspector.core.compare.pairing import Pairing
from inspector.core.quantmath.quant import dequantize
from inspector.core.runtime.prepared_cache import kept
from inspector.core.runtime.runner import ModelRunner
from inspector.core.stats.native import BlockCopy
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.fake_quant import fake_quant_after, fake_quantized_constant
from inspector.core.tflite.model import Model, Quantization, Tensor
from inspector.core.tflite.op_facts import BOUNDARY_OPS, NOT_EXTRACTABLE_OPS, facts
from inspector.core.tflite.rewrite import cached, file_key, read_object, to_bytes

NOT_ISOLATABLE = NOT_EXTRACTABLE_OPS | BOUNDARY_OPS
INTEGER_TYPES = frozenset({"int32", "int64", "bool", "uint32", "uint64"})  # unquantized: shapes, indices, masks
DEQUANTIZED_IN_MODEL = frozenset(QUANTIZED_DTYPES)  # B dtypes the isolated model dequantizes itself
INTEGER_NOTE = "computes integers only (shapes or indices): no quantization error of its own"


REFUSED_PREFIX = "the isolated-error model (made by the app from "


def describe_isolated_model(float_path: str) -> str:
    """What the isolated model is, for messages: the app's own model, not the user's file."""
    return f"{REFUSED_PREFIX}{float_path}: each float op fed the inputs B's op saw)"


@dataclass(frozen=True)
class IsoFeed:
    iso_tensor: int  # graph input of the isolated model
    quant_tensor: int  # the quantized-model tensor whose values it takes
    dtype: str  # what the input is fed as (B's dtype when the model dequantizes it itself)
    quant: Quantization | None = None  # dequantize in numpy first (a B dtype the model does not dequantize)


@dataclass
class IsolatedPlan:
    content: bytes
    feeds: list[IsoFeed]
    outputs: tuple[int, ...]  # tensor indices of the isolated model to read (float op outputs)
    float_ops: dict[int, int]  # quant op -> float op computed in isolation
    notes: dict[int, str] = field(default_factory=dict)  # quant op -> why it has no isolated value

    def feed(self, quant_values: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        """{isolated-model input: value} from B's values of one sample (views where the dtype
        already fits: the interpreter copies them in)."""
        return self.feed_of(self.feeds, quant_values)

    @staticmethod
    def feed_of(feeds: list[IsoFeed], quant_values: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        out = {}
        for f in feeds:
            v = quant_values[f.quant_tensor]
            if f.quant is not None:
                v = dequantize(v, f.quant)
            out[f.iso_tensor] = v if v.dtype == f.dtype else np.asarray(v, dtype=f.dtype)
        return out


_Direct = tuple[list[int], list["weakref.ref[np.ndarray]"], BlockCopy, list[IsoFeed]]


class IsolatedRunner:
    """The isolated model's interpreter, made at the first run with its inputs sized as B's
    values are (and made again if a later sample's sizes differ: dynamic dimensions).

    B's runner hands out the same views each sample while its tensors stay in place: the inputs
    fed as they are then go in by one native copy from those views' memory into the isolated
    model's input tensors (`native.BlockCopy`; a 1,500-op model has 1,400 of them: one
    `SetTensor` each took 6 ms a sample), the others (converted first) through `ModelRunner.run`."""

    def __init__(self, fm: Model, plan: IsolatedPlan, runtime: str) -> None:
        self.fm, self.plan, self.runtime = fm, plan, runtime
        self._runner: ModelRunner | None = None
        self._shapes: dict[int, tuple[int, ...]] = {}
        self._direct: _Direct | None = None  # (B tensors, weak views, copy, other feeds)

    def run(self, quant_values: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        direct = self._direct
        if direct is not None:
            tensors, last, copier, others = direct
            views = list(map(quant_values.__getitem__, tensors))
            if all(map(operator.is_, views, map(operator.call, last))):  # the same views, refilled
                copier.copy()
                assert self._runner is not None
                return self._runner.run(IsolatedPlan.feed_of(others, quant_values))
            self._direct = None
        values = self.plan.feed(quant_values)
        shapes = {i: tuple(v.shape) for i, v in values.items()}
        if self._runner is None or shapes != self._shapes:
            self._runner = None  # its views are gone: the caller dropped the last run's values
            self._runner = ModelRunner(self.fm, self.runtime, content=self.plan.content, exposed=self.plan.outputs,
                                       input_shapes=shapes, label=describe_isolated_model(self.fm.path))  # fmt: skip
            self._shapes = shapes
        out = self._runner.run(values)
        self._direct = self._copies(quant_values, out)
        return out

    def _copies(self, quant_values: Mapping[int, np.ndarray], out: Mapping[int, np.ndarray]) -> _Direct | None:
        """The native copy of the inputs fed as they are (B's value, contiguous, already in the
        input's dtype and size) from B's views into the input tensors, for the next samples."""
        fed: list[tuple[IsoFeed, np.ndarray, np.ndarray]] = []
        others: list[IsoFeed] = []
        for f in self.plan.feeds:
            v, dst = quant_values[f.quant_tensor], out.get(f.iso_tensor)
            plain = f.quant is None and v.dtype == f.dtype and v.flags.c_contiguous
            if plain and dst is not None and dst.dtype == v.dtype and dst.nbytes == v.nbytes and dst.flags.c_contiguous:
                fed.append((f, v, dst))
            else:
                others.append(f)
        if not fed:
            return None
        copier = BlockCopy([d.__array_interface__["data"][0] for _, _, d in fed],
                           [v.__array_interface__["data"][0] for _, v, _ in fed], [v.nbytes for _, v, _ in fed])  # fmt: skip
        return [f.quant_tensor for f, _, _ in fed], [weakref.ref(v) for _, v, _ in fed], copier, others


def integer_only(fm: Model, qm: Model, f_index: int, q_index: int) -> bool:
    """The op reads and writes unquantized integers only (SHAPE: whatever it reads)."""
    fop, qop = fm.main.ops[f_index], qm.main.ops[q_index]
    outs = [fm.main.tensors[o] for o in fop.outputs if o >= 0] + [qm.main.tensors[o] for o in qop.outputs if o >= 0]
    if not outs or any(t.dtype not in INTEGER_TYPES or t.quantization is not None for t in outs):
        return False
    if fop.type == "SHAPE":
        return True
    ins = [fm.main.tensors[i] for i in fop.inputs if i >= 0 and not fm.main.tensors[i].is_constant]
    return all(t.dtype in INTEGER_TYPES for t in ins)


def _eligible(fm: Model, qm: Model, f_index: int, q_index: int) -> str | None:
    """None when the op can be isolated, else the reason."""
    fop, qop = fm.main.ops[f_index], qm.main.ops[q_index]
    if fop.type in NOT_ISOLATABLE or fop.is_custom:
        return f"{fop.type} cannot be run on its own"
    if integer_only(fm, qm, f_index, q_index):
        return INTEGER_NOTE
    for pos, fi in enumerate(fop.inputs):
        if fi < 0:
            continue
        ft = fm.main.tensors[fi]
        if ft.is_constant or fake_quantized_constant(fm.main, fi) is not None:  # a QAT twin's kernel: kept
            continue
        if ft.is_variable or ft.dtype in ("resource", "variant", "string"):
            return f"input {pos} is a {ft.dtype} / variable tensor"
        qi = qop.inputs[pos] if pos < len(qop.inputs) else -1
        if qi < 0:
            return f"the quantized op has no input {pos}"
        qt = qm.main.tensors[qi]
        if tuple(qt.shape) != tuple(ft.shape):
            return f"input {pos} has shape {list(qt.shape)} in the quantized model, {list(ft.shape)} in the float model"
        if qt.dtype in ("resource", "variant", "string"):
            return f"input {pos} of the quantized op is a {qt.dtype} tensor"
    return None


def build_isolated_plan(fm: Model, qm: Model, pairing: Pairing) -> IsolatedPlan:
    """The isolated model of every op that can be cut out (one model)."""
    return build_isolated_parts(fm, qm, pairing, 1)[0]


def build_isolated_parts(fm: Model, qm: Model, pairing: Pairing, parts: int) -> list[IsolatedPlan]:
    """The isolated model cut in `parts` models of consecutive ops of about equal cost (so two
    threads can share the work); each carries every note, its own ops in `float_ops`. Kept per
    process and on disk (`runtime.prepared_cache`: keyed by both files' content)."""
    key = ("isolated", 2, parts, fm.main.index, qm.main.index, *file_key(fm.path), *file_key(qm.path))

    def build() -> list[IsolatedPlan]:  # kept on disk too: the next command of this pair reads it back
        return kept("isolated", (fm.path, qm.path), (2, parts, fm.main.index, qm.main.index), lambda: _build(fm, qm, pairing, parts))

    return cached(key, build)  # type: ignore[return-value]  # the cache returns what the builder made


def _dequantized_in_model(qt: Tensor, ft: Tensor) -> bool:
    return qt.quantization is not None and qt.dtype in DEQUANTIZED_IN_MODEL and ft.dtype == "float32" and not qt.quantization.is_blockwise


class _Builder:
    """Adds to A's subgraph (a copy) what feeds the cut-out ops: one graph input per B tensor
    read, one DEQUANTIZE after it where B's values are quantized, B constants as constants."""

    def __init__(self, fm: Model, qm: Model) -> None:
        from ai_edge_litert import schema_py_generated as schema

        self.schema = schema
        self.fm, self.qm = fm, qm
        self.m = read_object(fm.path)
        self.sg = self.m.subgraphs[fm.main.index]
        self.m.signatureDefs = []
        self.start_part()

    def start_part(self) -> None:
        """A new model (a part): its own inputs and DEQUANTIZE ops."""
        self.feeds: list[IsoFeed] = []
        self.dequantize_ops: list[Any] = []
        self.fed: dict[tuple[int, str], int] = {}  # (B tensor, float dtype) -> tensor the float ops read

    def serialize(self, ops: list[Any], outputs: list[int]) -> bytes:
        """The model of `ops`, reading this part's inputs, writing `outputs`; constant buffers
        no op of it reads are left out (emptied for the write, numbering kept)."""
        sg, m = self.sg, self.m
        sg.operators, sg.inputs, sg.outputs = ops, [f.iso_tensor for f in self.feeds], outputs
        used = {sg.tensors[t].buffer for op in ops for t in [*op.inputs, *op.outputs] if t >= 0}
        dropped = {}
        for k, buf in enumerate(m.buffers):
            if k not in used and buf.data is not None and len(buf.data):
                dropped[k] = buf.data
                buf.data = None
        try:
            return to_bytes(m)
        finally:
            for k, data in dropped.items():
                m.buffers[k].data = data

    def source(self, ft: Tensor, qt: Tensor) -> int:
        key = (qt.index, ft.dtype)
        if key not in self.fed:
            self.fed[key] = self._make(ft, qt)
        return self.fed[key]

    def _tensor(self, like: int, name: str, dtype: str, quant: Quantization | None) -> int:
        t = copy.deepcopy(self.sg.tensors[like])
        t.name = name.encode()
        t.type = getattr(self.schema.TensorType, dtype.upper())
        t.buffer = 0
        t.isVariable = False
        t.quantization = None
        if quant is not None:
            qp = self.schema.QuantizationParametersT()
            qp.scale = [float(s) for s in quant.scales]
            qp.zeroPoint = [int(z) for z in quant.zero_points]
            qp.quantizedDimension = int(quant.quantized_dimension)
            t.quantization = qp
        self.sg.tensors.append(t)
        return len(self.sg.tensors) - 1

    def _make(self, ft: Tensor, qt: Tensor) -> int:
        name = f"{ft.name}@isolated_from_B{qt.index}"
        if qt.is_constant:  # B holds a constant where A computes: a constant here too, in A's dtype
            data = np.asarray(self.qm.tensor_data(qt)).reshape(qt.shape)
            if qt.quantization is not None and qt.dtype.startswith(("int", "uint")) and not qt.quantization.is_blockwise:
                data = dequantize(data, qt.quantization)
            index = self._tensor(ft.index, name, ft.dtype, None)
            buf = self.schema.BufferT()
            buf.data = np.frombuffer(np.ascontiguousarray(data, dtype=ft.dtype).tobytes(), np.uint8).copy()
            self.m.buffers.append(buf)
            self.sg.tensors[index].buffer = len(self.m.buffers) - 1
            return index
        if _dequantized_in_model(qt, ft):
            raw = self._tensor(ft.index, name + "_raw", qt.dtype, qt.quantization)
            out = self._tensor(ft.index, name, "float32", None)
            op = self.schema.OperatorT()
            op.opcodeIndex = self._dequantize_code(qt)
            op.inputs, op.outputs = [raw], [out]
            self.dequantize_ops.append(op)
            self.feeds.append(IsoFeed(raw, qt.index, qt.dtype))
            return out
        index = self._tensor(ft.index, name, ft.dtype, None)
        numpy_dequantize = qt.quantization is not None and qt.dtype.startswith(("int", "uint")) and not qt.quantization.is_blockwise
        self.feeds.append(IsoFeed(index, qt.index, ft.dtype, qt.quantization if numpy_dequantize else None))
        return index

    def _dequantize_code(self, qt: Tensor) -> int:
        schema = self.schema
        code = schema.BuiltinOperator.DEQUANTIZE
        per_channel = qt.quantization is not None and qt.quantization.per_channel
        version = {"uint8": 1, "int16": 3}.get(qt.dtype, 5 if per_channel else 2)
        for i, oc in enumerate(self.m.operatorCodes):
            if max(int(oc.builtinCode), int(oc.deprecatedBuiltinCode)) == code and int(oc.version) == version and not oc.customCode:
                return i
        oc = schema.OperatorCodeT()
        oc.builtinCode = code
        oc.deprecatedBuiltinCode = code
        oc.version = version
        self.m.operatorCodes.append(oc)
        return len(self.m.operatorCodes) - 1


def op_cost(fm: Model, f_index: int) -> float:
    """A rough cost of running float op `f_index` alone: multiply-adds where it has weights
    (output elements x weights per output channel; a matrix product: x its inner dimension),
    else its input and output elements."""
    op = fm.main.ops[f_index]
    tensors = fm.main.tensors
    out = sum(tensors[o].num_elements for o in op.outputs if o >= 0)
    ins = sum(tensors[i].num_elements for i in op.inputs if i >= 0 and not tensors[i].is_constant)
    roles = facts(op.type).weights
    if roles is None or roles.weights >= len(op.inputs) or op.inputs[roles.weights] < 0:
        return float(out + ins)
    w = tensors[op.inputs[roles.weights]]
    if roles.channel_dim is not None and w.is_constant and roles.channel_dim < len(w.shape):
        per_output = w.num_elements / max(1, w.shape[roles.channel_dim])
    else:
        a = tensors[op.inputs[roles.activation]] if roles.activation < len(op.inputs) and op.inputs[roles.activation] >= 0 else None
        per_output = a.shape[-1] if a is not None and a.shape else 1
    return float(out) * max(1.0, float(per_output)) + ins


def split_by_cost(costs: list[float], parts: int) -> list[int]:
    """Cut points of `costs` into at most `parts` runs of consecutive items of about equal total
    cost, none empty (fewer runs when there are fewer items)."""
    n = len(costs)
    parts = max(1, min(parts, n))
    prefix = np.cumsum(costs) if n else np.zeros(0)
    total = float(prefix[-1]) if n else 0.0
    cuts: list[int] = []
    for k in range(1, parts):
        c = int(np.searchsorted(prefix, total * k / parts)) + 1  # the item reaching the target ends the run
        cuts.append(min(max(c, (cuts[-1] if cuts else 0) + 1), n - (parts - k)))
    return cuts


def _build(fm: Model, qm: Model, pairing: Pairing, parts: int = 1) -> list[IsolatedPlan]:
    notes: dict[int, str] = {}
    kept: list[tuple[int, int]] = []  # (float op, quant op)
    for p in pairing.ops:
        reason = _eligible(fm, qm, p.float_op, p.quant_op)
        if reason is None:
            kept.append((p.float_op, p.quant_op))
        else:
            notes[p.quant_op] = reason
    kept.sort()
    cuts = split_by_cost([op_cost(fm, f) for f, _ in kept], max(1, parts))
    b = _Builder(fm, qm)
    rescale_float_weights(b.m, fm, qm, pairing)  # an equalized P and C: A's weights as B's equalization left them
    ops = list(b.sg.operators)
    producers, consumers = fm.main.producers(), fm.main.consumers()
    plans = []
    for lo, hi in zip([0, *cuts], [*cuts, len(kept)], strict=True):
        b.start_part()
        new_ops = []
        outputs: list[int] = []
        for f_index, q_index in kept[lo:hi]:
            op = copy.copy(ops[f_index])
            fop, qop = fm.main.ops[f_index], qm.main.ops[q_index]
            inputs = list(op.inputs)
            after: list[int] = []  # the output's fake quant (QAT twin): the value B reproduces is after it
            for o in fop.outputs:
                fq = fake_quant_after(fm.main, o, consumers) if o >= 0 else None
                if fq is not None:
                    after += [fq.quantize_op, fq.dequantize_op]
                    outputs.append(fq.output)
            for pos, fi in enumerate(fop.inputs):
                if fi < 0 or fm.main.tensors[fi].is_constant:
                    continue
                wq = fake_quantized_constant(fm.main, fi, producers)
                if wq is not None:  # the kernel's fake quant runs inside the isolated model, as in A
                    new_ops += [ops[wq.quantize_op], ops[wq.dequantize_op]]
                    continue
                inputs[pos] = b.source(fm.main.tensors[fi], qm.main.tensors[qop.inputs[pos]])
            op.inputs = inputs
            new_ops.append(op)
            new_ops += [ops[i] for i in after]
            outputs.extend(o for o in fop.outputs if o >= 0 and o not in outputs)
        plans.append(IsolatedPlan(
            content=b.serialize(b.dequantize_ops + new_ops, outputs),
            feeds=b.feeds,
            outputs=tuple(outputs),
            float_ops={q: f for f, q in kept[lo:hi]},
            notes=notes,
        ))
    return plans
