"""Do two model files hold the same model? Ops (in order, with their options) and the tensors
they read and write (name, type, shape, quantization, constant values) compared subgraph by
subgraph, ignoring how the flatbuffer lays them out (tensor and buffer numbering, a tensor left
unused, padding, metadata). An edit whose output equals its input this way changed nothing:
the requantize loop makes no new version of it."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np

from inspector.core.tflite.model import Model, Subgraph

SCALE_RTOL = 1e-6  # a scale recomputed in float32 (bias = input x weight) may move by one rounding


class _Scales(tuple[float, ...]):
    """Scales equal within float32 rounding of a recomputation (same integers: same outputs)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, tuple) and len(self) == len(other) and bool(np.allclose(self, other, rtol=SCALE_RTOL, atol=0))

    __hash__ = tuple.__hash__


def _tensor_key(model: Model, sg: Subgraph, i: int, memo: dict[int, tuple[object, ...]]) -> tuple[object, ...]:
    if i < 0:
        return ("omitted",)
    if i not in memo:
        t = sg.tensors[i]
        data = hashlib.sha256(model.buffer_bytes(t.buffer).tobytes()).hexdigest() if t.buffer_size else ""
        q = t.quantization
        scales = _Scales(q.scales) if q is not None else None
        q = dataclasses.replace(q, scales=()) if q is not None else None
        memo[i] = (dataclasses.replace(t, index=0, buffer=0, quantization=q), scales, data)  # numbering depends on the layout
    return memo[i]


def _subgraph_key(model: Model, sg: Subgraph) -> list[tuple[object, ...]]:
    memo: dict[int, tuple[object, ...]] = {}
    key: list[tuple[object, ...]] = [tuple(_tensor_key(model, sg, i, memo) for i in sg.inputs + sg.outputs)]
    for op in sg.ops:
        key.append((op.type, op.is_custom, op.version, repr(sorted(op.options.items())),
                    tuple(_tensor_key(model, sg, i, memo) for i in op.inputs + op.outputs + op.intermediates)))  # fmt: skip
    return key


def same_content(a: Model, b: Model) -> bool:
    """True when every subgraph runs the same ops on tensors of the same name, type, shape,
    quantization and constant values."""
    if len(a.subgraphs) != len(b.subgraphs):
        return False
    return all(_subgraph_key(a, sa) == _subgraph_key(b, sb) for sa, sb in zip(a.subgraphs, b.subgraphs, strict=True))
