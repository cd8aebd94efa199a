"""Comparing model A with a model B whose pairs were equalized (`requantize/equalize.py`).

Cross-layer equalization divides producer P's output channel i (weights and bias) by s_i and
multiplies consumer C's input-channel-i weights by s_i: the float function of the whole model is
unchanged, but P's output tensor in B now stands for A's P output ÷ s per channel, and P's and C's
weights differ from A's by these factors. Compared against A as they are, P reads ~0 dB with
"clipping", the pair check calls both ops' weights edited, and C's isolated error runs A's C op
on B-scale inputs. So the edit records what it did inside the model it writes (metadata entry
`tflite_inspector.equalize`, JSON, a standalone `compare` reads it too):

    {"version": 1, "subgraph": int, "pairs": [{"producer": P, "consumer": C, "producer_type": str,
     "consumer_type": str, "tensor": P's output tensor index, "tensor_name": str, "scales": [s_i],
     "activation": "RELU" (optional: P's ReLU6 was replaced by ReLU, `relu6_equalize`)}]}

and every comparison takes the reference like for like from it:
- activations: A's values of P's output ÷ s along the last axis (accumulated statistics, kept
  values, the per-sample views: `float_divisors` / `divided`);
- isolated error: the isolated float model runs P with its weights and bias ÷ s and C with its
  input-channel weights × s (`rescale_float_weights`), so P's own output is in B's scale and C is
  fed B's dequantized input in the scale its weights expect;
- weights (pair check, weight views, the diagnosis' weight SQNR): A's P weights and bias ÷ s per
  output channel, A's C weights × s per input channel (`reference_constant`, `reference_source`).
A pair marked `"activation": "RELU"` changed the float function (`requantize/relu6.py`): B computes
ReLU where A clamps at 6. Its reference stays A's (with ReLU6, ÷ s), and every note and line
about it says so: a difference there includes the float change wherever A's value reached 6.
A record that no longer fits B (an op renumbered, a tensor renamed, a channel count changed) is
ignored pair by pair: the comparison is then against A as it is, as before.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, overload

import numpy as np

from inspector.core.compare.pairing import Pairing
from inspector.core.tflite.model import Model, Tensor
from inspector.core.tflite.op_facts import EQUALIZE_OPS, WEIGHTED_OPS

METADATA_NAME = "tflite_inspector.equalize"
VERSION = 1


@dataclass(frozen=True)
class EqualizedPair:
    producer: int  # B op index (in the recorded subgraph)
    consumer: int
    producer_type: str
    consumer_type: str
    tensor: int  # P's output tensor in B (C's input)
    tensor_name: str
    scales: np.ndarray  # s per channel (float64)
    relu6: bool = False  # P's ReLU6 was replaced by ReLU (the float function changed; `requantize/relu6.py`)

    @property
    def span(self) -> str:
        return f"s {float(self.scales.min()):.3g} to {float(self.scales.max()):.3g}"


@dataclass(frozen=True)
class Equalization:
    subgraph: int
    pairs: tuple[EqualizedPair, ...]

    def divisors(self) -> dict[int, np.ndarray]:
        """{B tensor: s}: A's values of that tensor ÷ s along the last axis are B's reference."""
        out: dict[int, np.ndarray] = {}
        for p in self.pairs:
            out[p.tensor] = out.get(p.tensor, 1.0) * p.scales
        return out

    def constant(self, op: int, position: int, values: np.ndarray) -> np.ndarray | None:
        """A's constant at input `position` of B's op `op` as the equalization left it (None:
        untouched): P's weights and bias ÷ s per output channel, C's weights × s per input channel."""
        v = None
        for p in self.pairs:
            if op == p.producer and position in (1, 2):
                v = _producer(np.asarray(values if v is None else v, np.float64), p.producer_type, p.scales, position)
            if op == p.consumer and position == 1:
                v = _consumer(np.asarray(values if v is None else v, np.float64), p.consumer_type, p.scales)
        return None if v is None else v.astype(np.asarray(values).dtype if np.asarray(values).dtype.kind == "f" else np.float32)

    def note(self, op: int) -> str:
        """What the reference of B's op `op` is, in words ('' when the equalization does not touch it)."""
        parts = []
        for p in self.pairs:
            if op == p.producer:
                parts.append(f"A's op {op} output ÷ s per channel, its weights and bias ÷ s (equalized with op {p.consumer}, {p.span})")
                if p.relu6:
                    parts.append(f"op {op}'s ReLU6 was replaced by ReLU (relu6_equalize): A clamps at 6 where B does not, "
                                 "so its difference from A includes that change of the float function")
            if op == p.consumer:
                parts.append(f"A's op {op} weights × s per input channel (equalized with op {p.producer}, {p.span})")
        return "reference rescaled: " + "; ".join(parts) if parts else ""


def record(subgraph: int, pairs: Sequence[Mapping[str, Any]]) -> bytes:
    """The metadata entry's bytes: `pairs` are dicts with the keys of the module docstring."""
    keys = ("producer", "consumer", "producer_type", "consumer_type", "tensor", "tensor_name")
    rows = [{**{k: p[k] for k in keys}, "scales": [float(v) for v in p["scales"]],
             **({"activation": "RELU"} if p.get("activation") == "RELU" else {})} for p in pairs]
    return json.dumps({"version": VERSION, "subgraph": int(subgraph), "pairs": rows}, sort_keys=True).encode()


def parse_record(data: bytes | None) -> dict[str, Any] | None:
    """The recorded JSON (None when absent or unreadable)."""
    if not data:
        return None
    try:
        d = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    return d if isinstance(d, dict) and d.get("version") == VERSION and isinstance(d.get("pairs"), list) else None


_read: weakref.WeakKeyDictionary[Model, tuple[int, Equalization | None]] = weakref.WeakKeyDictionary()


def equalization_of(qm: Model | None) -> Equalization | None:
    """The equalization recorded in B (for its chosen subgraph), or None."""
    if qm is None or METADATA_NAME not in qm.metadata:
        return None
    hit = _read.get(qm)
    if hit is not None and hit[0] == qm.main.index:
        return hit[1]
    found = _resolve(qm, parse_record(qm.metadata_bytes(METADATA_NAME)))
    _read[qm] = (qm.main.index, found)
    return found


def _resolve(qm: Model, d: dict[str, Any] | None) -> Equalization | None:
    if d is None or d.get("subgraph") != qm.main.index:
        return None
    sg = qm.main
    producers, consumers = sg.producers(), sg.consumers()
    pairs = []
    for r in d["pairs"]:
        try:
            t, name, s = int(r["tensor"]), str(r["tensor_name"]), np.asarray(r["scales"], np.float64).reshape(-1)
        except (KeyError, TypeError, ValueError):
            continue
        if not 0 <= t < len(sg.tensors) or sg.tensors[t].name != name:
            t = next((x.index for x in sg.tensors if x.name == name), -1)
        p, readers = producers.get(t), consumers.get(t, [])
        if p is None or len(readers) != 1 or p.type not in EQUALIZE_OPS or readers[0].type not in EQUALIZE_OPS:
            continue
        c = readers[0]
        if sg.tensors[t].shape[-1:] != (len(s),) or not np.all(np.isfinite(s)) or not np.all(s > 0):
            continue
        pairs.append(EqualizedPair(p.index, c.index, p.type, c.type, t, name, s, r.get("activation") == "RELU"))
    return Equalization(qm.main.index, tuple(pairs)) if pairs else None


def _along(v: np.ndarray, dim: int, s: np.ndarray) -> np.ndarray:
    shape = [1] * v.ndim
    shape[dim] = len(s)
    return s.reshape(shape)


def _producer(v: np.ndarray, p_type: str, s: np.ndarray, position: int) -> np.ndarray:
    if position == 2:
        return v / s.reshape(v.shape) if v.size == len(s) else v
    dim = WEIGHTED_OPS[p_type].channel_dim
    return v / _along(v, dim, s) if dim is not None and v.ndim > dim and v.shape[dim] == len(s) else v


def _consumer(v: np.ndarray, c_type: str, s: np.ndarray) -> np.ndarray:
    roles = WEIGHTED_OPS.get(c_type)
    dim = roles.input_dim if roles is not None else None
    if dim is None or v.ndim <= dim or v.shape[dim] % len(s):
        return v
    scaled: np.ndarray = v * _along(v, dim, np.repeat(s, v.shape[dim] // len(s)))  # depthwise: column k reads channel k // multiplier
    return scaled


# ---- the hooks: one call each in comparison, isolated, pair_check, weights, the diagnosis ----------
def float_divisors(qm: Model, pairing: Pairing) -> dict[int, np.ndarray]:
    """{A tensor: s (float32)}: divide A's values of it by s along the last axis (`divided`)."""
    eq = equalization_of(qm)
    if eq is None:
        return {}
    out = {}
    for t, s in eq.divisors().items():
        f = pairing.float_for_quant(t)
        if f is not None:
            out[f] = s.astype(np.float32)
    return out


def divided(values: dict[int, np.ndarray], divisors: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
    """`values` (A's tensors by index) with the equalized ones ÷ s along the last axis."""
    if not divisors:
        return values
    out = dict(values)
    for t, s in divisors.items():
        v = out.get(t)
        if v is not None and v.shape[-1:] == s.shape:
            out[t] = (v / s).astype(v.dtype, copy=False)
    return out


def rescale_float_weights(m: Any, fm: Model, qm: Model, pairing: Pairing) -> None:
    """In `m` (A's schema.ModelT, the isolated model being built): the float weights and biases of
    the ops paired with an equalized P or C, as the equalization left them (new buffers)."""
    eq = equalization_of(qm)
    if eq is None:
        return
    from ai_edge_litert import schema_py_generated as schema

    sg = m.subgraphs[fm.main.index]
    done: set[int] = set()
    for op in sorted({i for p in eq.pairs for i in (p.producer, p.consumer)}):
        f = pairing.float_op_for(op)
        if f is None:
            continue
        for pos in (1, 2):
            ins = fm.main.ops[f].inputs
            if pos >= len(ins) or ins[pos] < 0 or ins[pos] in done:
                continue
            t = fm.main.tensors[ins[pos]]
            data = fm.tensor_data(t)
            if data is None or t.dtype != "float32":
                continue
            new = eq.constant(op, pos, np.asarray(data).reshape(t.shape))
            if new is None:
                continue
            buf = schema.BufferT()
            buf.data = np.frombuffer(np.ascontiguousarray(new, np.float32).tobytes(), np.uint8).copy()
            m.buffers.append(buf)
            sg.tensors[t.index].buffer = len(m.buffers) - 1
            done.add(t.index)


def _owner(qm: Model, eq: Equalization, tensor: int) -> tuple[int, int] | None:
    """(B op, input position) of an equalized op that reads constant `tensor` as weights or bias."""
    for op in sorted({i for p in eq.pairs for i in (p.producer, p.consumer)}):
        ins = qm.main.ops[op].inputs
        for pos in (1, 2):
            if pos < len(ins) and ins[pos] == tensor:
                return op, pos
    return None


def reference_constant(qm: Model | None, tensor: Tensor | int | None, values: np.ndarray | None) -> tuple[np.ndarray, str] | None:
    """A's values of the constant paired with B's `tensor` as the equalization left them, and a
    note saying so; None when B records no equalization of that tensor's op."""
    eq = equalization_of(qm)
    if eq is None or qm is None or tensor is None or values is None:  # an equalization is read from qm
        return None
    owner = _owner(qm, eq, tensor if isinstance(tensor, int) else tensor.index)
    if owner is None:
        return None
    new = eq.constant(owner[0], owner[1], values)
    if new is None:
        return None
    what = "bias" if owner[1] == 2 else "weights"
    p = next(p for p in eq.pairs if owner[0] in (p.producer, p.consumer))
    how = "÷ s per output channel" if owner[0] == p.producer else "× s per input channel"
    return new, f"A's {what} of op {owner[0]} {how} (equalized, {p.span}): compared like for like"


@overload
def reference_weights(qm: Model | None, tensor: Tensor | int | None, values: np.ndarray) -> np.ndarray: ...
@overload
def reference_weights(qm: Model | None, tensor: Tensor | int | None, values: None) -> None: ...
def reference_weights(qm: Model | None, tensor: Tensor | int | None, values: np.ndarray | None) -> np.ndarray | None:
    """`reference_constant`'s values, or `values` as they are."""
    got = reference_constant(qm, tensor, values)
    return values if got is None else got[0]


def reference_source(qm: Model | None, tensor: Tensor | int | None, a: Any, notes: list[str] | None = None) -> Any:
    """A's `WeightSource` for B's constant `tensor`, rescaled where B records an equalization
    (its note appended to `notes`); `a` as it is otherwise."""
    if a is None or getattr(a, "is_quantized", False) or getattr(a, "blockwise", None) is not None:
        return a
    got = reference_constant(qm, tensor, a.values)
    if got is None:
        return a
    if notes is not None:
        notes.append(got[1])
    how = "÷ s" if "÷ s" in got[1] else "× s"
    return replace(a, values=got[0].reshape(a.values.shape), label=f"{a.label} {how} (equalized)".strip())


def annotated(qm: Model | None, layers: tuple[Any, ...]) -> tuple[Any, ...]:
    """Layers of an equalized P or C with the rescaled reference named in their diagnosis' evidence."""
    eq = equalization_of(qm)
    if eq is None:
        return layers
    out = []
    for lay in layers:
        note = eq.note(lay.op_index)
        d = lay.diagnosis
        if note and d is not None and note not in d.evidence:
            lay = replace(lay, diagnosis=replace(d, evidence=f"{d.evidence}; {note}"))
        out.append(lay)
    return tuple(out)


SCAN_MAX_BYTES = 64 * 2**20  # files up to this are searched for the record's name before being parsed


def _may_record_equalization(quant_path: str) -> bool:
    """False when B's bytes cannot hold the record: its metadata name is nowhere in them (a
    flatbuffer keeps the name as it is). The command line's notes then need no parse of B (a
    second one, beside the worker's: 40-60 ms of CPU while the comparison runs)."""
    from inspector.core.tflite.litertlm import model_file_key, read_model_bytes

    try:
        if int(model_file_key(quant_path)[1]) > SCAN_MAX_BYTES:
            return True
        return METADATA_NAME.encode() in read_model_bytes(quant_path)
    except Exception:  # noqa: BLE001 - the parse below reports nothing either: it decides
        return True


def reference_lines(quant_path: str, signature: str | None = None) -> tuple[str, ...]:
    """One line per equalized pair B records, for the command line's text output (none without)."""
    from inspector.core.tflite.model import load_model
    from inspector.core.tflite.signatures import select_signature

    if not _may_record_equalization(quant_path):
        return ()
    try:
        eq = equalization_of(select_signature(load_model(quant_path), signature))
    except Exception:  # noqa: BLE001 - the comparison itself reported any problem with the file
        return ()
    return tuple(
        f"note: B records an equalization of op {p.producer} with op {p.consumer} ({p.span}, metadata '{METADATA_NAME}'): "
        f"op {p.producer}'s output is compared with A's ÷ s per channel, the weights of ops {p.producer} and {p.consumer} "
        f"with A's ÷ s per output channel and × s per input channel"
        + (f"; its ReLU6 was replaced by ReLU (relu6_equalize, a change of the float function): A's reference still "
           f"clamps at 6, so op {p.producer} and what follows differ from A there by that change too" if p.relu6 else "")
        for p in (eq.pairs if eq is not None else ())
    )
