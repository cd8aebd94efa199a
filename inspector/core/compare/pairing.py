"""Align the tensors and ops of a float model with those of its quantized twin.

Ops are matched by output tensor name first (the TF converter keeps most names), then by graph
structure: an alignment (longest common subsequence) of the op-type sequences, with the
QUANTIZE / DEQUANTIZE ops that quantization inserts left out. Tensors follow their ops
(outputs and inputs position by position, looking through inserted (DE)QUANTIZE ops), and
graph inputs/outputs pair by position. When model A keeps fake quantization (the float twin
of a QAT model: QUANTIZE → DEQUANTIZE after each layer), a quantized tensor of B pairs with
A's value after that pair (`tflite.fake_quant`), the one B's integers reproduce. Every pair says how it was matched; what cannot be
matched is listed, never silently dropped.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from inspector.core.errors import InspectorError
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.fake_quant import after_fake_quant
from inspector.core.tflite.model import Model, Op, Subgraph
from inspector.core.tflite.op_facts import BOUNDARY_OPS

# Ops that quantization inserts or removes; they have no counterpart on the other side.
TRANSPARENT_OPS = BOUNDARY_OPS  # skipped when ops are paired


@dataclass(frozen=True, slots=True)
class OpPair:
    float_op: int
    quant_op: int
    match: str  # "name" | "structure"


@dataclass(frozen=True, slots=True)
class TensorPair:
    float_tensor: int
    quant_tensor: int
    match: str  # "name" | "structure" | "graph_input" | "graph_output"


@dataclass(frozen=True)
class Pairing:
    ops: tuple[OpPair, ...]
    tensors: tuple[TensorPair, ...]
    unmatched_quant_ops: tuple[int, ...]
    unmatched_float_ops: tuple[int, ...]
    _q2f: dict[int, int] = field(default_factory=dict, repr=False)
    _f2q: dict[int, int] = field(default_factory=dict, repr=False)
    _qop2f: dict[int, int] = field(default_factory=dict, repr=False)
    _fop2q: dict[int, int] = field(default_factory=dict, repr=False)

    def float_for_quant(self, quant_tensor: int) -> int | None:
        return self._q2f.get(quant_tensor)

    def quant_for_float(self, float_tensor: int) -> int | None:
        return self._f2q.get(float_tensor)

    def float_op_for(self, quant_op: int) -> int | None:
        return self._qop2f.get(quant_op)

    def quant_op_for(self, float_op: int) -> int | None:
        return self._fop2q.get(float_op)

    def tensor_match(self, quant_tensor: int) -> str | None:
        for p in self.tensors:
            if p.quant_tensor == quant_tensor:
                return p.match
        return None


def compute_ops(sg: Subgraph) -> list[Op]:
    return [op for op in sg.ops if op.type not in TRANSPARENT_OPS]


def _source(sg: Subgraph, producers: Mapping[int, Op], t: int) -> int:
    """Look through inserted QUANTIZE/DEQUANTIZE ops to the tensor they convert."""
    seen = 0
    while t >= 0 and seen < 8:
        op = producers.get(t)
        if op is None or op.type not in TRANSPARENT_OPS or not op.inputs:
            return t
        t = op.inputs[0]
        seen += 1
    return t


def _lcs(a: list[str], b: list[str]) -> list[tuple[int, int]]:
    n, m = len(a), len(b)
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            dp[i][j] = dp[i + 1][j + 1] + 1 if a[i] == b[j] else max(dp[i + 1][j], dp[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            out.append((i, j))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def pair_models(float_model: Model, quant_model: Model, subgraph: int | None = None) -> Pairing:
    """Pair the ops and tensors of one subgraph (default: each model's `main`, its signature's)."""
    if subgraph is None:
        fsg, qsg = float_model.main, quant_model.main
    else:
        fsg, qsg = float_model.subgraphs[subgraph], quant_model.subgraphs[subgraph]
    fops, qops = compute_ops(fsg), compute_ops(qsg)
    fprod, qprod = fsg.producers(), qsg.producers()
    f_by_name: dict[str, Op] = {}
    for op in fops:
        for o in op.outputs:
            if o >= 0:
                f_by_name.setdefault(fsg.tensors[o].name, op)

    op_pairs: dict[int, OpPair] = {}
    used_f: set[int] = set()
    for qop in qops:
        for o in qop.outputs:
            fop = f_by_name.get(qsg.tensors[o].name) if o >= 0 else None
            if fop is not None and fop.type == qop.type and fop.index not in used_f:
                op_pairs[qop.index] = OpPair(fop.index, qop.index, "name")
                used_f.add(fop.index)
                break

    # Structural fallback for the rest, aligned between the name-matched anchors.
    rest_q = [op for op in qops if op.index not in op_pairs]
    rest_f = [op for op in fops if op.index not in used_f]
    if rest_q and rest_f:
        for i, j in _lcs([o.type for o in rest_f], [o.type for o in rest_q]):
            fop, qop = rest_f[i], rest_q[j]
            if _order_consistent(op_pairs, fop.index, qop.index):
                op_pairs[qop.index] = OpPair(fop.index, qop.index, "structure")
                used_f.add(fop.index)

    q2f: dict[int, tuple[int, str]] = {}

    def add(qt: int, ft: int, how: str) -> None:
        if qt >= 0 and ft >= 0 and qt not in q2f:
            q2f[qt] = (ft, how)

    for qi, fi in zip(qsg.inputs, fsg.inputs, strict=False):
        add(qi, fi, "graph_input")
        add(_source(qsg, qprod, qi), fi, "graph_input")
    for qo, fo in zip(qsg.outputs, fsg.outputs, strict=False):
        add(qo, fo, "graph_output")
    fcons = fsg.consumers()

    def settled(qt: int, ft: int) -> int:
        """A's tensor for B's `qt`: past A's fake quant (QUANTIZE → DEQUANTIZE, a QAT model's float
        twin) when B's tensor is quantized, since that is the value B's integers reproduce."""
        if qt < 0 or ft < 0 or qsg.tensors[qt].dtype not in INT_LIMITS or fsg.tensors[ft].is_constant:
            return ft  # a kernel pairs with A's stored kernel (the weight view reads both files)
        return after_fake_quant(fsg, ft, fcons)

    for qop_index, pair in sorted(op_pairs.items()):
        qop, fop = qsg.ops[qop_index], fsg.ops[pair.float_op]
        how = pair.match
        for qo, fo in zip(qop.outputs, fop.outputs, strict=False):
            add(qo, settled(qo, fo), how)
        for qi, fi in zip(qop.inputs, fop.inputs, strict=False):
            if qi >= 0 and fi >= 0:
                qs, fs = _source(qsg, qprod, qi), _source(fsg, fprod, fi)
                name_ok = qsg.tensors[qs].name == fsg.tensors[fs].name
                add(qs, settled(qs, fs), "name" if name_ok else "structure")
                add(qi, settled(qi, fs), "structure")  # the (de)quantized copy the op actually reads

    tensors = tuple(TensorPair(f, q, how) for q, (f, how) in sorted(q2f.items()))
    ops = tuple(op_pairs[k] for k in sorted(op_pairs))
    return Pairing(
        ops=ops,
        tensors=tensors,
        unmatched_quant_ops=tuple(op.index for op in qops if op.index not in op_pairs),
        unmatched_float_ops=tuple(op.index for op in fops if op.index not in used_f),
        _q2f={p.quant_tensor: p.float_tensor for p in tensors},
        _f2q={p.float_tensor: p.quant_tensor for p in reversed(tensors)},
        _qop2f={p.quant_op: p.float_op for p in ops},
        _fop2q={p.float_op: p.quant_op for p in ops},
    )


def _order_consistent(pairs: dict[int, OpPair], f_index: int, q_index: int) -> bool:
    """A structural match must not cross a name-matched pair (keeps execution order)."""
    for q, p in pairs.items():
        if (q < q_index) != (p.float_op < f_index):
            return False
    return True


def check_correspondence(float_model: Model, quant_model: Model) -> None:
    """Raise PairingError when the two models cannot be twins (inputs/outputs do not match).

    Shapes are compared with batch and dynamic (-1) dimensions ignored; dtypes may differ
    (quantized I/O). Graph differences inside are left to pairing, which lists what it
    cannot match.
    """
    from inspector.core.errors import PairingError

    fsg, qsg = float_model.main, quant_model.main
    names = f"{Path(float_model.path).name} and {Path(quant_model.path).name}"
    for what, fi, qi in (("inputs", fsg.inputs, qsg.inputs), ("outputs", fsg.outputs, qsg.outputs)):
        if len(fi) != len(qi):
            raise PairingError(
                f"{names} do not correspond: the float model has {len(fi)} {what}, the quantized model {len(qi)}",
                quant_model.path,
            )
        for k, (a, b) in enumerate(zip(fi, qi, strict=True)):
            ta, tb = fsg.tensors[a], qsg.tensors[b]
            if not _shapes_agree(ta.shape_signature, tb.shape_signature):
                raise PairingError(
                    f"{names} do not correspond: {what[:-1]} {k} is {list(ta.shape_signature)} in the float model "
                    f"but {list(tb.shape_signature)} in the quantized model",
                    quant_model.path,
                )


def _shapes_agree(a: tuple[int, ...], b: tuple[int, ...]) -> bool:
    if len(a) != len(b):
        return False
    return all(x == y or x < 0 or y < 0 or i == 0 for i, (x, y) in enumerate(zip(a, b, strict=True)))


_pair_memo: dict[tuple[int, int], Pairing] = {}
_pair_lock = threading.Lock()


def paired_models(float_model: Model, quant_model: Model) -> Pairing:
    """`pair_models(float_model, quant_model)` kept while both models live: the thread that
    loads a model pairs it with the other slot's (`warm_pairing`), so a 1,500-op model B
    arriving costs the GUI thread a lookup instead of ~40 ms of pairing."""
    key = (id(float_model), id(quant_model))
    with _pair_lock:
        hit = _pair_memo.get(key)
    if hit is not None:
        return hit
    pairing = pair_models(float_model, quant_model)
    with _pair_lock:
        if key not in _pair_memo:
            _pair_memo[key] = pairing
            for m in (float_model, quant_model):
                weakref.finalize(m, _pair_memo.pop, key, None)
        return _pair_memo[key]


def warm_pairing(float_model: Model | None, quant_model: Model | None) -> None:
    """Pair the two models now when both are there (call it off the GUI thread); a failure is
    left for the caller that needs the pairing to report."""
    if float_model is None or quant_model is None:
        return
    with contextlib.suppress(InspectorError, IndexError, ValueError):
        paired_models(float_model, quant_model)
