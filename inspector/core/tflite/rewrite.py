"""Rewritten copies of a model (flatbuffer object API), made once per file and cached.

`expose_intermediates` makes every tensor an op writes in the main subgraph also a subgraph
output. The interpreter then keeps each of those values in its own buffer after `invoke()`, so
delegates (XNNPACK) can run the whole graph and every value read back is real; reading
intermediates of an unmodified model is not (buffers are reused, delegated tensors are hidden).
Signatures are dropped: the copy is addressed by tensor index, and its outputs no longer match
the signature's.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from inspector.core.errors import ModelFormatError
from inspector.core.tflite.litertlm import model_file_key, read_model_bytes, section_extent

# Tensor types that cannot be read back as numpy arrays.
_OPAQUE_TYPES = frozenset({"STRING", "RESOURCE", "VARIANT"})

_cache: OrderedDict[tuple[object, ...], object] = OrderedDict()
_lock = threading.Lock()
_CACHE_SIZE = 8  # one pair: 2 models, 2 rewritten copies, the isolated build, the pair check
CACHE_MAX_BYTES = 64 * 2**20  # bigger rewritten models are rebuilt per run, not kept in memory


def file_key(path: str) -> tuple[str, int, int] | tuple[str, int, int, int, int]:
    """(real path, size, mtime[, section offset, size]): a model file or a bundle section."""
    return model_file_key(path)


def cached(key: tuple[object, ...], build: Callable[[], object]) -> object:
    """Small process-wide LRU cache of rewritten models."""
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    value = build()
    with _lock:
        _cache[key] = value
        while len(_cache) > _CACHE_SIZE:
            _cache.popitem(last=False)
    return value


def read_object(path: str) -> Any:  # a schema ModelT: the generated classes carry no types
    """The model as a mutable `ModelT` object."""
    from ai_edge_litert.tools import flatbuffer_utils as fu

    try:
        data = read_model_bytes(path)
        model = fu.read_model_from_bytearray(data)
    except OSError as e:
        raise ModelFormatError(f"cannot read the file ({e.strerror or e})", path) from e
    except Exception as e:  # malformed flatbuffers raise struct/index errors
        raise ModelFormatError(f"cannot rewrite the model ({type(e).__name__}: {e})", path) from e
    # The reader renumbers buffers (drops empty ones) but not the legacy metadata_buffer list,
    # which would then name other or missing buffers; the runtime never reads it.
    model.metadataBuffer = None
    return model


def to_bytes(model_obj: Any) -> bytes:  # a schema ModelT
    """Serialized through `edit.write`: dangling metadata references are dropped first."""
    from inspector.core.tflite.edit import write

    return write(model_obj)


def exposed_outputs(path: str, subgraph: int) -> tuple[int, ...]:
    """The subgraph's outputs followed by every other op output that can be read back."""
    from inspector.core.tflite.model import load_model

    # the parsed model the comparison keeps under this key (`compare.comparison._load`): not parsed twice
    sg = cached(("model", *file_key(path)), lambda: load_model(path)).subgraphs[subgraph]  # type: ignore[attr-defined]  # the cache returns what the builder made (a Model)
    outs = list(sg.outputs)
    seen = set(outs)
    for op in sg.ops:
        for o in op.outputs:
            if o >= 0 and o not in seen and sg.tensors[o].dtype.upper() not in _OPAQUE_TYPES:
                outs.append(o)
                seen.add(o)
    return tuple(outs)


def _u32(buf: bytes | bytearray | memoryview, pos: int) -> int:
    return int.from_bytes(buf[pos : pos + 4], "little")


def _table_field(buf: bytes | bytearray | memoryview, table: int, slot: int) -> int:
    """Absolute position of field `slot` of the table at `table`, or 0 when the field is absent."""
    vtable = table - int.from_bytes(buf[table : table + 4], "little", signed=True)
    vt_len = int.from_bytes(buf[vtable : vtable + 2], "little")
    off = 4 + 2 * slot
    if off >= vt_len:
        return 0
    rel = int.from_bytes(buf[vtable + off : vtable + off + 2], "little")
    return table + rel if rel else 0


def patch_outputs(data: bytes | bytearray | memoryview, subgraph: int, outputs: tuple[int, ...], size: int | None = None) -> bytes | None:
    """`data` with the subgraph's outputs replaced and signatures emptied, by patching the
    flatbuffer in place: the new outputs vector is appended after everything else (flatbuffer
    offsets point forward, so every other byte, weights included, stays where it was). One copy of
    the file instead of the object API's four; None when the layout does not allow it (the
    caller falls back to the object API)."""
    n = len(data) if size is None else size
    if n < 8 or n > 2**31 - 4 * (len(outputs) + 8):
        return None
    root = _u32(data, 0)
    subgraphs = _table_field(data, root, 2)  # Model.subgraphs
    if not subgraphs:
        return None
    vec = subgraphs + _u32(data, subgraphs)
    if subgraph >= _u32(data, vec):
        return None
    slot = vec + 4 + 4 * subgraph
    table = slot + _u32(data, slot)
    field = _table_field(data, table, 2)  # SubGraph.outputs
    if not field:
        return None
    start = (n + 15) // 16 * 16
    if isinstance(data, bytearray) and len(data) == start + 4 + 4 * len(outputs):
        out = data  # read with room to spare (patch_file): patched in place, one copy less
    else:
        out = bytearray(start + 4 + 4 * len(outputs))
        out[:n] = data[:n]
    out[start : start + 4] = len(outputs).to_bytes(4, "little")
    for k, t in enumerate(outputs):
        out[start + 4 + 4 * k : start + 8 + 4 * k] = int(t).to_bytes(4, "little", signed=True)
    out[field : field + 4] = (start - field).to_bytes(4, "little")
    sig = _table_field(out, root, 7)  # Model.signature_defs: emptied (outputs no longer match)
    if sig:
        out[sig + _u32(out, sig) : sig + _u32(out, sig) + 4] = b"\0\0\0\0"
    return bytes(out)


def patch_file(path: str, subgraph: int, outputs: tuple[int, ...]) -> bytes | None:
    """`patch_outputs` on a file, read straight into a buffer with room for the new vector."""
    ext = section_extent(path)
    n = os.path.getsize(path) if ext is None else ext[2]
    buf = read_model_bytes(path, (n + 15) // 16 * 16 - n + 4 + 4 * len(outputs))
    return patch_outputs(buf, subgraph, outputs, size=n)


def expose_intermediates(path: str, subgraph: int) -> tuple[bytes, tuple[int, ...]]:
    """(model bytes, exposed tensor indices): every op output of `subgraph` is a graph output.

    Tensor indices are unchanged, so they match the original model's. Patched in place where the
    flatbuffer allows it (a copy of the file plus a few bytes), else rebuilt with the object API.
    Cached per file when small; big models are not kept (their bytes would stay in memory).
    """

    def build() -> tuple[bytes, tuple[int, ...]]:
        outs = None
        try:
            outs = exposed_outputs(path, subgraph)
            patched = patch_file(path, subgraph, outs)
        except (OSError, IndexError, ValueError, ModelFormatError):
            patched = None
        if patched is not None and outs is not None:
            return patched, outs
        return _rebuild(path, subgraph)

    key = ("expose", subgraph, *file_key(path))
    if key[3] > CACHE_MAX_BYTES:  # file size
        return build()
    return cached(key, build)  # type: ignore[return-value]  # the cache returns what the builder made


def _rebuild(path: str, subgraph: int) -> tuple[bytes, tuple[int, ...]]:
    """The object-API way (any layout): read, set the outputs, serialize again."""
    outs = exposed_outputs(path, subgraph)
    m = read_object(path)
    m.subgraphs[subgraph].outputs = list(outs)
    m.signatureDefs = []
    return to_bytes(m), outs
