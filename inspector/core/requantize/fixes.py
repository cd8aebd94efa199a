"""Repairs to what litert-quantizer emits, each one found by running its output in LiteRT.

- operator codes: for an op code it adds (DEQUANTIZE, QUANTIZE) it writes `builtin_code` but
  leaves the legacy `deprecated_builtin_code` at 0, which is ADD; readers that trust the legacy
  field for codes < 127 (the `tflite` package does) then see ADD. Both fields are made consistent.
- signatures: when an output tensor is also read inside the graph (a state variable update) the
  quantizer appends a DEQUANTIZE and makes its result the subgraph output, but the signature still
  names the int8 tensor, which the XNNPACK runtime does not keep ("Tensor data is null"). Signature
  entries are pointed back at the subgraph's inputs/outputs by position.
- asymmetric weights: with `symmetric: false` (and `skip_checks`) the quantizer writes int8
  weights with non-zero zero points, which the integer weight ops refuse
  ("zero_point != 0 ... failed to prepare"). They are requantized symmetrically (zero point 0,
  scale max|w|/127 per channel) and their int32 bias rescaled to input scale x new weight scale.
- legacy `metadata_buffer`: the quantizer renumbers buffers (it drops empty ones) and remaps the
  tensors and `metadata` entries but not this list, which then names buffers past the end
  (a float model without signature from an older converter: "buffer 89 of 89"). Its entries are
  followed to the same metadata (by name, else by the same bytes) or dropped.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.tflite import edit as fe
from inspector.core.tflite.op_facts import WEIGHTED_OPS, OpRoles

IoPositions = dict[
    str, dict[str, dict[str, int]]
]  # signature -> inputs/outputs -> name -> position


def io_positions(model: Any) -> IoPositions:
    """Where each signature input/output sits in its subgraph's input/output list."""
    out: IoPositions = {}
    for sig in model.signatureDefs or []:
        sg = model.subgraphs[sig.subgraphIndex]
        key = (sig.signatureKey or b"").decode("utf-8", "replace")
        entry: dict[str, dict[str, int]] = {"inputs": {}, "outputs": {}}
        for kind, maps, order in (
            ("inputs", sig.inputs, sg.inputs),
            ("outputs", sig.outputs, sg.outputs),
        ):
            order = [int(i) for i in (order if order is not None else [])]
            for m in maps or []:
                if int(m.tensorIndex) in order:
                    entry[kind][(m.name or b"").decode("utf-8", "replace")] = order.index(
                        int(m.tensorIndex)
                    )
        out[key] = entry
    return out


def normalize_op_codes(model: Any) -> list[str]:
    fixed = 0
    for oc in model.operatorCodes:
        code = max(int(oc.builtinCode), int(oc.deprecatedBuiltinCode))
        legacy = min(code, fe.PLACEHOLDER_FOR_GREATER_OP_CODES)
        if oc.builtinCode != code or oc.deprecatedBuiltinCode != legacy:
            oc.builtinCode, oc.deprecatedBuiltinCode = code, legacy
            fixed += 1
    if not fixed:
        return []
    return [
        f"fixed {fixed} operator code(s) the quantizer wrote with the legacy code field left at 0 "
        "(ADD); some readers showed those ops (e.g. DEQUANTIZE) as ADD"
    ]


def repoint_signatures(model: Any, positions: IoPositions) -> list[str]:
    notes = []
    for sig in model.signatureDefs or []:
        key = (sig.signatureKey or b"").decode("utf-8", "replace")
        sg = model.subgraphs[sig.subgraphIndex]
        for kind, maps, order in (
            ("inputs", sig.inputs, sg.inputs),
            ("outputs", sig.outputs, sg.outputs),
        ):
            order = [int(i) for i in (order if order is not None else [])]
            for m in maps or []:
                name = (m.name or b"").decode("utf-8", "replace")
                pos = positions.get(key, {}).get(kind, {}).get(name)
                if pos is None or pos >= len(order) or order[pos] == int(m.tensorIndex):
                    continue
                old = fe.tensor_name(sg.tensors[int(m.tensorIndex)])
                m.tensorIndex = order[pos]
                new = fe.tensor_name(sg.tensors[order[pos]])
                notes.append(
                    f"signature '{key}' {kind[:-1]} '{name}' pointed at '{old}', which is no longer a "
                    f"subgraph {kind[:-1]} after quantization (the runtime does not keep it); re-pointed to '{new}'"
                )
    return notes


def asymmetric_weight_ops(model: Any) -> list[tuple[int, int]]:
    """(subgraph, op) of integer-compute weight ops whose int8 weights have non-zero zero points."""
    found = []
    for si, sg in enumerate(model.subgraphs):
        for oi, op in enumerate(sg.operators):
            r = _roles(fe.op_name(model, op))
            if r is None or len(op.inputs) <= r.weights or op.inputs[r.weights] < 0:
                continue
            w = sg.tensors[op.inputs[r.weights]]
            q = w.quantization
            if (
                w.type == schema.TensorType.INT8
                and q is not None
                and q.zeroPoint is not None
                and np.any(np.asarray(q.zeroPoint) != 0)
            ):
                if fe.constant_data(model, w) is not None:
                    found.append((si, oi))
    return found


def symmetrize_weights(model: Any, targets: list[tuple[int, int]]) -> list[str]:
    notes = []
    for si, oi in targets:
        sg = model.subgraphs[si]
        op = sg.operators[oi]
        kind = fe.op_name(model, op)
        r = _roles(kind)
        assert r is not None and r.bias is not None
        w = sg.tensors[op.inputs[r.weights]]
        q = w.quantization
        shape = [int(d) for d in w.shape]
        data = fe.constant_data(model, w)
        assert data is not None  # `asymmetric_weight_ops` found only weights with data
        values = data.astype(np.float64).reshape(shape)
        axis = int(q.quantizedDimension) if len(q.scale) > 1 else None
        scale, zp = _per_axis(q.scale, shape, axis), _per_axis(q.zeroPoint, shape, axis)
        real = (values - zp) * scale
        reduce = tuple(d for d in range(len(shape)) if d != axis) if axis is not None else None
        amax = np.max(np.abs(real), axis=reduce, keepdims=True) if reduce != () else np.abs(real)
        new_scale = np.where(amax > 0, amax / 127.0, 1.0)
        new_q = np.clip(np.round(real / new_scale), -127, 127).astype(np.int8)
        fe.set_buffer(model, w, new_q)
        old_scale = np.asarray(q.scale, dtype=np.float64)
        q.scale = new_scale.reshape(-1).astype(np.float32)
        q.zeroPoint = np.zeros(len(q.scale), dtype=np.int64)
        _rescale_bias(model, sg, op, r.bias, old_scale, np.asarray(q.scale, dtype=np.float64))
        notes.append(
            f"fixed: requantized the int8 weights '{fe.tensor_name(w)}' of {kind} "
            f"'{fe.tensor_name(sg.tensors[op.outputs[0]])}' symmetrically (they had non-zero zero points, "
            "which the kernel refuses) and rescaled its bias"
        )
    return notes


def _per_axis(v: Any, shape: list[int], axis: int | None) -> np.ndarray:
    arr = np.asarray(v, dtype=np.float64)
    if axis is None:
        return arr.reshape(())
    view = [1] * len(shape)
    view[axis] = len(arr)
    return arr.reshape(view)


def _roles(kind: str) -> OpRoles | None:
    """Weight and bias positions of an integer weight op with a bias (TRANSPOSE_CONV's bias is input 3)."""
    r = WEIGHTED_OPS.get(kind)
    return r if r is not None and r.bias is not None else None


def _rescale_bias(model: Any, sg: Any, op: Any, pos: int, old_w: np.ndarray, new_w: np.ndarray) -> None:
    if len(op.inputs) <= pos or op.inputs[pos] < 0:
        return
    b = sg.tensors[op.inputs[pos]]
    q = b.quantization
    data = fe.constant_data(model, b)
    if (
        data is None
        or q is None
        or q.scale is None
        or b.type not in (schema.TensorType.INT32, schema.TensorType.INT64)
    ):
        return
    old_b = np.asarray(q.scale, dtype=np.float64)
    input_scale = old_b / old_w  # bias scale = input scale x weight scale
    new_b = input_scale * new_w
    real = data.astype(np.float64) * old_b
    lim = np.iinfo(np.int32 if b.type == schema.TensorType.INT32 else np.int64)
    new_data = np.clip(np.round(real / new_b), lim.min, lim.max).astype(data.dtype)
    if (
        fe.buffer_users(model, b.buffer) > 1
        or sum(list(op2.inputs).count(op.inputs[pos]) for op2 in sg.operators) > 1
    ):
        copy = schema.TensorT()
        copy.__dict__.update(b.__dict__)
        copy.quantization = schema.QuantizationParametersT()
        copy.quantization.__dict__.update(q.__dict__)
        copy.name = (fe.tensor_name(b) + "_sym").encode()
        copy.buffer = 0
        sg.tensors.append(copy)
        op.inputs[pos] = len(sg.tensors) - 1
        b, q = copy, copy.quantization
    fe.set_buffer(model, b, new_data)
    q.scale = new_b.astype(np.float32)
    q.zeroPoint = np.zeros(len(new_b), dtype=np.int64)


def remap_metadata_buffer(before: Any, after: Any) -> list[str]:
    """Point `after.metadataBuffer` (copied unchanged by the quantizer) at the buffers that hold
    what `before`'s entries named: the metadata entry of the same name, else a buffer with the
    same bytes at the index the quantizer's compaction gives; entries found nowhere are dropped."""
    old = [int(b) for b in (before.metadataBuffer if before.metadataBuffer is not None else [])]
    if not old:
        return []
    names_after = {fe.tensor_name(m): int(m.buffer) for m in (after.metadata or [])}
    bufs_before, bufs_after = before.buffers or [], after.buffers or []

    def data(bufs: list[Any], i: int) -> bytes:
        d = bufs[i].data if 0 <= i < len(bufs) else None
        return b"" if d is None else np.asarray(d, np.uint8).tobytes()

    new: list[int] = []
    for b in old:
        names = [fe.tensor_name(m) for m in (before.metadata or []) if int(m.buffer) == b]
        hit = next((names_after[n] for n in names if n in names_after), None)
        if hit is None and data(bufs_before, b):
            compacted = 1 + sum(1 for k in range(min(b, len(bufs_before))) if data(bufs_before, k))
            if data(bufs_after, compacted) == data(bufs_before, b):
                hit = compacted
        if hit is not None:
            new.append(hit)
    after.metadataBuffer = new or None
    if new == old:
        return []
    return [f"metadata_buffer {old} renumbered to {new or 'none'} (the quantizer renumbered the buffers but not this list)"]
