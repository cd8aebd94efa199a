"""Small helpers to edit a COPY of a model through the flatbuffer object API (ai_edge_litert).

Used to prepare a float model for the quantizer and to repair what the quantizer emits. The
user's file is never touched: everything here works on bytes and returns new bytes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.tools import flatbuffer_utils as fu

from inspector.core.tflite.dtypes import numpy_dtype_name

ModelT = Any  # schema.ModelT; the generated classes carry no type information

OP_NAMES: dict[int, str] = {
    v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")
}
PLACEHOLDER_FOR_GREATER_OP_CODES = 127


def read(data: bytes | bytearray) -> ModelT:
    """Object model with every buffer's data inline.

    litert-quantizer may store large constants after the flatbuffer (buffer offset/size, as
    for >2 GB models); the object API leaves those buffers empty, and writing the object back
    would drop the data ("Constant buffer 1 specified an out of range offset"). They are
    loaded inline here, so `write` produces a self-contained flatbuffer.
    """
    raw = memoryview(bytes(data))
    model = fu.convert_bytearray_to_object(bytearray(raw))
    for buf in model.buffers or []:
        if (buf.data is None or len(buf.data) == 0) and buf.offset > 1 and buf.size > 0:
            end = int(buf.offset) + int(buf.size)
            if end > len(raw):
                raise ValueError(f"buffer data at {buf.offset}+{buf.size} lies beyond the end of the model")
            buf.data = np.frombuffer(raw[int(buf.offset) : end], dtype=np.uint8).copy()
            buf.offset, buf.size = 0, 0
    return model


def write(model: ModelT) -> bytes:
    """Serialize `model`, with dangling metadata references dropped first (see `repair_references`):
    every model this tool writes opens in it."""
    repair_references(model)
    return bytes(fu.convert_object_to_bytearray(model))


def repair_references(model: ModelT) -> list[str]:
    """Drop `metadata_buffer` and `metadata` entries that name a buffer the model does not have;
    one note per kind. The runtime ignores them, readers refuse them. Tools that renumber
    buffers (litert-quantizer compacts empty ones) leave the legacy `metadata_buffer` list stale."""
    n = len(model.buffers or [])
    notes = []
    legacy = _ints(model.metadataBuffer)
    kept = [b for b in legacy if 0 <= b < n]
    if len(kept) != len(legacy):
        gone = sorted(set(legacy) - set(kept))
        notes.append(f"dropped metadata_buffer entries naming buffer(s) {', '.join(map(str, gone))} of a model with {n} buffers")
        model.metadataBuffer = kept or None
    entries = list(model.metadata or [])
    good = [m for m in entries if 0 <= int(m.buffer) < n]
    if len(good) != len(entries):
        names = ", ".join(repr(tensor_name(m)) for m in entries if m not in good)
        notes.append(f"dropped metadata entries {names} naming buffers past the {n} the model has")
        model.metadata = good or None
    return notes


def set_metadata(model: ModelT, name: str, data: bytes) -> None:
    """Add the metadata entry `name` holding `data` in a new buffer at the end (every other buffer
    keeps its index), or replace the data of the entry of that name."""
    raw = np.frombuffer(bytes(data), dtype=np.uint8).copy()
    for md in model.metadata or []:
        if tensor_name(md) == name and 0 <= int(md.buffer) < len(model.buffers) and buffer_users(model, int(md.buffer)) == 0:
            model.buffers[int(md.buffer)].data = raw
            return
    buf = schema.BufferT()
    buf.data = raw
    model.buffers.append(buf)
    md = schema.MetadataT()
    md.name = name.encode()
    md.buffer = len(model.buffers) - 1
    model.metadata = [m for m in (model.metadata or []) if tensor_name(m) != name] + [md]


def op_code(model: ModelT, op: Any) -> int:
    oc = model.operatorCodes[op.opcodeIndex]
    return max(int(oc.builtinCode), int(oc.deprecatedBuiltinCode))


def op_name(model: ModelT, op: Any) -> str:
    oc = model.operatorCodes[op.opcodeIndex]
    code = op_code(model, op)
    if code == schema.BuiltinOperator.CUSTOM:
        return (oc.customCode or b"CUSTOM").decode("utf-8", "replace")
    return OP_NAMES.get(code, f"BUILTIN_{code}")


def tensor_name(tensor: Any) -> str:
    name = tensor.name
    return name.decode("utf-8", "replace") if isinstance(name, bytes) else str(name or "")


def constant_data(model: ModelT, tensor: Any) -> np.ndarray | None:
    """The tensor's constant values as a flat numpy array, or None for an activation."""
    buf = model.buffers[tensor.buffer] if 0 <= tensor.buffer < len(model.buffers) else None
    if buf is None or buf.data is None or len(buf.data) == 0:
        return None
    dtype = numpy_dtype_name(tensor.type)
    if dtype in ("int2", "int4", "uint4", "string", "resource", "variant", "bfloat16") or dtype.startswith(
        ("unknown", "float8")
    ):
        return None
    return np.frombuffer(np.asarray(buf.data, dtype=np.uint8).tobytes(), dtype=np.dtype(dtype))


def set_buffer(model: ModelT, tensor: Any, values: np.ndarray, *, share_ok: bool = False) -> None:
    """Point `tensor` at a buffer holding `values` (a new buffer unless it owns its buffer)."""
    raw = np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype=np.uint8).copy()
    if share_ok or (tensor.buffer > 0 and buffer_users(model, tensor.buffer) <= 1):
        model.buffers[tensor.buffer].data = raw
        return
    buf = schema.BufferT()
    buf.data = raw
    model.buffers.append(buf)
    tensor.buffer = len(model.buffers) - 1


def buffer_users(model: ModelT, buffer_index: int) -> int:
    return sum(1 for sg in model.subgraphs for t in sg.tensors if t.buffer == buffer_index)


def consumers(subgraph: Any, tensor_index: int) -> list[int]:
    return [
        i
        for i, op in enumerate(subgraph.operators)
        if tensor_index in list(op.inputs if op.inputs is not None else [])
    ]


def remove_ops(subgraph: Any, indices: set[int]) -> None:
    subgraph.operators = [op for i, op in enumerate(subgraph.operators) if i not in indices]


def _ints(v: Any) -> list[int]:
    return [] if v is None else [int(x) for x in v]


def drop_unused_tensors(model: ModelT, sg_index: int) -> int:
    """Remove tensors nothing refers to (ops, subgraph I/O, signatures); returns how many went.

    An orphaned tensor without data confuses the calibrator, which reads every tensor.
    """
    sg = model.subgraphs[sg_index]
    sigs = [s for s in (model.signatureDefs or []) if s.subgraphIndex == sg_index]
    used = set(_ints(sg.inputs)) | set(_ints(sg.outputs))
    for op in sg.operators:
        used |= set(_ints(op.inputs)) | set(_ints(op.outputs)) | set(_ints(op.intermediates))
    for s in sigs:
        used |= {int(m.tensorIndex) for m in (s.inputs or []) + (s.outputs or [])}
    used.discard(-1)
    if len(used) == len(sg.tensors):
        return 0
    keep = sorted(used)
    remap = {old: new for new, old in enumerate(keep)}

    def re(v: Any) -> list[int]:
        return [remap[i] if i >= 0 else -1 for i in _ints(v)]

    dropped = len(sg.tensors) - len(keep)
    sg.tensors = [sg.tensors[i] for i in keep]
    sg.inputs, sg.outputs = re(sg.inputs), re(sg.outputs)
    for op in sg.operators:
        op.inputs, op.outputs = re(op.inputs), re(op.outputs)
        if op.intermediates is not None:
            op.intermediates = re(op.intermediates)
    for s in sigs:
        for m in (s.inputs or []) + (s.outputs or []):
            m.tensorIndex = remap[int(m.tensorIndex)]
    return dropped


def release_unused_buffers(model: ModelT) -> int:
    """Empty the data of buffers no tensor or metadata entry refers to; returns bytes freed."""
    used = {int(t.buffer) for sg in model.subgraphs for t in sg.tensors}
    used |= {int(md.buffer) for md in (model.metadata or [])} | set(_ints(model.metadataBuffer))
    freed = 0
    for i, buf in enumerate(model.buffers):
        if i not in used and buf.data is not None and len(buf.data):
            freed += len(buf.data)
            buf.data = None
    return freed
