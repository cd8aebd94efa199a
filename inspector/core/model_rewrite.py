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

from inspector.core.errors import ModelFormatError

# Tensor types that cannot be read back as numpy arrays.
_OPAQUE_TYPES = frozenset({"STRING", "RESOURCE", "VARIANT"})

_cache: OrderedDict[tuple, object] = OrderedDict()
_lock = threading.Lock()
_CACHE_SIZE = 6


def file_key(path: str) -> tuple:
    st = os.stat(path)
    return (os.path.realpath(path), st.st_size, st.st_mtime_ns)


def cached(key: tuple, build: Callable[[], object]) -> object:
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


def read_object(path: str):
    """The model as a mutable `ModelT` object."""
    from ai_edge_litert.tools import flatbuffer_utils as fu

    try:
        with open(path, "rb") as f:
            data = bytearray(f.read())
        return fu.read_model_from_bytearray(data)
    except OSError as e:
        raise ModelFormatError(f"cannot read the file ({e.strerror or e})", path) from e
    except Exception as e:  # malformed flatbuffers raise struct/index errors
        raise ModelFormatError(f"cannot rewrite the model ({type(e).__name__}: {e})", path) from e


def to_bytes(model_obj) -> bytes:
    from ai_edge_litert.tools import flatbuffer_utils as fu

    return bytes(fu.convert_object_to_bytearray(model_obj))


def _opaque(model_obj, tensor) -> bool:
    from ai_edge_litert import schema_py_generated as schema

    names = {v: k for k, v in vars(schema.TensorType).items() if not k.startswith("_")}
    return names.get(tensor.type, "") in _OPAQUE_TYPES


def expose_intermediates(path: str, subgraph: int = 0) -> tuple[bytes, tuple[int, ...]]:
    """(model bytes, exposed tensor indices): every op output of `subgraph` is a graph output.

    Tensor indices are unchanged, so they match the original model's. Cached per file.
    """

    def build() -> tuple[bytes, tuple[int, ...]]:
        m = read_object(path)
        sg = m.subgraphs[subgraph]
        outs = [int(o) for o in (sg.outputs if sg.outputs is not None else [])]
        seen = set(outs)
        for op in sg.operators or []:
            for o in op.outputs if op.outputs is not None else []:
                o = int(o)
                if o >= 0 and o not in seen and not _opaque(m, sg.tensors[o]):
                    outs.append(o)
                    seen.add(o)
        sg.outputs = outs
        m.signatureDefs = []
        return to_bytes(m), tuple(outs)

    return cached(("expose", subgraph, *file_key(path)), build)  # type: ignore[return-value]
