"""Deterministic mutations of valid .tflite files, aimed at the flatbuffer structure.

Shared by the default fuzz test (a fixed corpus of cases) and the long-running target in
`tests/fuzz/`. A mutation is reproducible from (seed file, kind, case seed).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from inspector.core.errors import ModelFormatError
from inspector.core.review.model_summary import model_summary_json, model_summary_text
from inspector.core.tflite.model import Model
from inspector.core.tflite.validate import MAX_TENSORS, validate_flatbuffer
from inspector.core.writing import to_json_text

KINDS = ("bitflip", "truncate", "splice", "offset", "count", "word", "zero_run", "duplicate")

_INTERESTING = (0, 1, 2, 3, 4, 8, 0x7F, 0x80, 0xFF, 0x7FFF, 0xFFFF, 812, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE)


@dataclass
class SeedModel:
    """A valid model with where its offsets, vector lengths and non-data bytes are."""

    name: str
    data: bytes
    offsets: np.ndarray  # byte positions of uoffsets
    lengths: np.ndarray  # byte positions of vector lengths
    structure: np.ndarray  # byte positions outside tensor/metadata buffer data

    @classmethod
    def load(cls, name: str, path) -> SeedModel:
        data = bytes(open(path, "rb").read())
        offs, lens = [], []
        validate_flatbuffer(data, name, trace=lambda kind, pos: (offs if kind == "offset" else lens).append(pos))
        model = Model(path)
        mask = np.ones(len(data), bool)
        for b in range(len(model._buffer_sizes)):
            start, size = model._buffer_extent(b)
            if size:
                mask[start : start + size] = False
        model.close()
        return cls(name, data, np.unique(offs), np.unique(lens), np.flatnonzero(mask))


def mutate(seed: SeedModel, kind: str, rng: np.random.Generator, donors: list[SeedModel]) -> bytes:
    data = bytearray(seed.data)
    n = len(data)

    def pos() -> int:
        return int(rng.choice(seed.structure))

    def put_u32(p: int, v: int) -> None:
        p = min(p, n - 4)
        data[p : p + 4] = int(v & 0xFFFFFFFF).to_bytes(4, "little")

    if kind == "bitflip":
        for _ in range(int(rng.integers(1, 5))):
            p = pos()
            data[p] ^= 1 << int(rng.integers(0, 8))
    elif kind == "truncate":
        return bytes(data[: int(rng.integers(0, n))])
    elif kind == "splice":
        donor = donors[int(rng.integers(0, len(donors)))].data
        length = int(rng.integers(4, 256))
        src = int(rng.integers(0, max(1, len(donor) - length)))
        dst = pos()
        chunk = donor[src : src + length]
        data[dst : dst + len(chunk)] = chunk
        data = data[:n]
    elif kind == "offset":
        p = int(rng.choice(seed.offsets))
        old = int.from_bytes(data[p : p + 4], "little")
        choices = (*_INTERESTING, n, n - p, n - p - 1, old + 4, old - 4, old * 2, int(rng.integers(0, 2**32)))
        put_u32(p, choices[int(rng.integers(0, len(choices)))])
    elif kind == "count":
        p = int(rng.choice(seed.lengths))
        old = int.from_bytes(data[p : p + 4], "little")
        choices = (MAX_TENSORS + 1, 2**31 - 1, 2**32 - 1, old + 1, old * 1000 + 7, n // 4, n, 0)
        put_u32(p, choices[int(rng.integers(0, len(choices)))])
    elif kind == "word":
        p = pos() & ~3
        put_u32(p, _INTERESTING[int(rng.integers(0, len(_INTERESTING)))] if rng.random() < 0.7 else int(rng.integers(0, 2**32)))
    elif kind == "zero_run":
        p, k = pos(), int(rng.integers(1, 64))
        data[p : p + k] = bytes(len(data[p : p + k]))
    elif kind == "duplicate":  # copy one structure region over another (shared-table confusion)
        a, b, length = pos(), pos(), int(rng.integers(8, 128))
        chunk = bytes(data[a : a + length])
        data[b : b + len(chunk)] = chunk
        data = data[:n]
    else:
        raise KeyError(kind)
    return bytes(data)


def exercise(path: Path) -> str:
    """What `info` and the model pane do with a file: 'ok' or 'rejected' (clean error)."""
    try:
        m = Model(path)
        to_json_text(model_summary_json(m))
        model_summary_text(m)
        for sg in m.subgraphs:
            for t in sg.tensors:
                m.tensor_data(t)
        for name in m.metadata:
            m.metadata_bytes(name)
        m.close()
        return "ok"
    except ModelFormatError as e:
        assert e.path == str(path)
        assert e.message and "\n" not in e.message
        return "rejected"


# ------------------------------------------------------------- other files the commands read

BYTE_KINDS = ("truncate", "head", "bitflip", "zero_run")
NPZ_KINDS = (*BYTE_KINDS, "shape", "dtype", "values", "pickle", "empty", "renamed", "scalar")


def mutate_bytes(data: bytes, kind: str, rng: np.random.Generator) -> bytes:
    """A byte-level mutation of any file: cut short, bits flipped in the first 64 bytes (headers,
    signatures) or anywhere, a run of zeros, or (`signature`) its first bytes zeroed."""
    out = bytearray(data)
    n = len(out)
    if kind == "truncate":
        return bytes(out[: int(rng.integers(0, max(1, n)))])
    if kind in ("head", "bitflip"):
        span = min(n, 64) if kind == "head" else n
        for _ in range(int(rng.integers(1, 5))):
            p = int(rng.integers(0, span))
            out[p] ^= 1 << int(rng.integers(0, 8))
        return bytes(out)
    if kind == "signature":  # the first bytes zeroed: what identifies the format is gone
        k = int(rng.integers(1, 17))
        out[:k] = bytes(len(out[:k]))
        return bytes(out)
    if kind == "zero_run":
        p, k = int(rng.integers(0, n)), int(rng.integers(1, 256))
        out[p : p + k] = bytes(len(out[p : p + k]))
        return bytes(out)
    raise KeyError(kind)


def mutate_npz(path: Path, kind: str, rng: np.random.Generator) -> bytes:
    """A mutated copy of the .npz at `path`: bytes (BYTE_KINDS) or arrays that load but do not
    fit (another shape or dtype, NaN/inf, a pickled object array, no samples, renamed, a scalar)."""
    import io

    if kind in BYTE_KINDS:
        return mutate_bytes(path.read_bytes(), kind, rng)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    key = sorted(arrays)[int(rng.integers(0, len(arrays)))]
    a = arrays[key]
    if kind == "shape":
        arrays[key] = a.reshape(-1)[: max(1, a.size // 2)] if rng.random() < 0.5 else np.concatenate([a, a], axis=-1)
    elif kind == "dtype":
        dtypes = (np.int64, np.complex64, np.bool_, "U3", np.float16, np.uint8)
        arrays[key] = a.astype(dtypes[int(rng.integers(0, len(dtypes)))])
    elif kind == "values":
        b = a.astype(np.float32, copy=True)
        b.reshape(-1)[rng.integers(0, b.size, size=max(1, b.size // 10))] = (np.nan, np.inf, -np.inf, 1e38)[int(rng.integers(0, 4))]
        arrays[key] = b
    elif kind == "pickle":
        arrays[key] = np.array([{"x": 1}, None], dtype=object)
    elif kind == "empty":
        arrays[key] = a[:0]
    elif kind == "renamed":
        arrays["not_" + key] = arrays.pop(key)
    elif kind == "scalar":
        arrays[key] = np.float32(1.0)
    else:
        raise KeyError(kind)
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


JSON_KINDS = ("truncate", "bitflip", "value", "drop", "type")


def mutate_json(data: bytes, kind: str, rng: np.random.Generator) -> bytes:
    """A mutated saved plan or recipe: bytes cut or flipped, or JSON that parses but holds a
    value of another kind, a key dropped, or the top level of another type."""
    import json

    if kind in ("truncate", "bitflip"):
        return mutate_bytes(data, kind, rng)
    obj = json.loads(data)
    if kind == "type":
        return json.dumps([obj, 1] if rng.random() < 0.5 else "plan").encode()
    places: list[tuple[object, object]] = []

    def walk(o: object) -> None:
        items = o.items() if isinstance(o, dict) else enumerate(o) if isinstance(o, list) else ()
        for k, v in list(items):
            places.append((o, k))
            walk(v)

    walk(obj)
    if not places:
        return b"{}"
    parent, key = places[int(rng.integers(0, len(places)))]
    if kind == "drop":
        del parent[key]  # type: ignore[index, attr-defined]
    else:
        others = (None, -1, 2**40, 1e308, "x", "op:999", [], {}, True, "(unclosed[")
        parent[key] = others[int(rng.integers(0, len(others)))]  # type: ignore[index]
    return json.dumps(obj).encode()
