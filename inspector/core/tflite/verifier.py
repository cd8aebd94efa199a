"""Bounds-checked reading of flatbuffer tables, vectors and strings.

The generated `tflite` accessors follow offsets blindly; a hostile file can point them
anywhere. This reader checks every offset it follows (the approach of the C++ flatbuffers
Verifier): a table's vtable and fields lie inside the file, a vector's length times its
element size fits in what remains, a string ends with its NUL. Every failure is a
`ModelFormatError` naming the file, the object (e.g. "subgraph 0, tensor 12") and the byte.
"""

from __future__ import annotations

import mmap
import struct
from collections.abc import Callable

import numpy as np

from inspector.core.errors import ModelFormatError

_U8 = struct.Struct("<B")
_I8 = struct.Struct("<b")
_U16 = struct.Struct("<H")
_I32 = struct.Struct("<i")
_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_SCALARS = {"b": _I8, "B": _U8, "H": _U16, "i": _I32, "I": _U32, "Q": _U64}
_NP = {"i": "<i4", "I": "<u4", "f": "<f4", "q": "<i8", "B": "u1", "H": "<u2"}
_SIZES = {"b": 1, "B": 1, "H": 2, "i": 4, "I": 4, "f": 4, "q": 8, "Q": 8}

# The bytes a model is read from: a file's bytes, a copy, or a mapped file or section.
Buffer = bytes | bytearray | memoryview | mmap.mmap

# Trace hook: called with (kind, byte position) for every offset and vector length read.
Trace = Callable[[str, int], None]


class Reader:
    """Checked access to a flatbuffer held in `buf` (bytes, bytearray or mmap)."""

    def __init__(self, buf: Buffer, path: str, trace: Trace | None = None) -> None:
        self.buf = buf
        self.n = len(buf)
        self.path = path
        self.trace = trace

    def fail(self, message: str) -> ModelFormatError:
        return ModelFormatError(message, self.path)

    def scalar(self, fmt: str, pos: int, what: str) -> int:
        st = _SCALARS[fmt]
        if pos < 0 or pos + st.size > self.n:
            raise self.fail(f"{what}: byte {pos} is outside the file ({self.n} bytes)")
        value: int = st.unpack_from(self.buf, pos)[0]
        return value

    def deref(self, pos: int, what: str) -> int:
        """Follow the unsigned 32-bit offset stored at `pos`; return the absolute target."""
        if self.trace:
            self.trace("offset", pos)
        target = pos + self.scalar("I", pos, what)
        if target >= self.n:
            raise self.fail(
                f"{what}: the offset at byte {pos} points to byte {target}, past the end of the file "
                f"({self.n} bytes): truncated or corrupt"
            )
        return target

    def table(self, pos: int, what: str) -> Table:
        """A table starting at absolute byte `pos`, with its vtable checked."""
        if pos < 0 or pos + 4 > self.n:
            raise self.fail(f"{what}: the table at byte {pos} lies outside the file ({self.n} bytes)")
        vt = pos - _I32.unpack_from(self.buf, pos)[0]
        if vt < 0 or vt + 4 > self.n:
            raise self.fail(f"{what}: the table at byte {pos} has its field table at byte {vt}, outside the file")
        vt_size, t_size = struct.unpack_from("<HH", self.buf, vt)
        if vt_size < 4 or vt_size % 2 or vt + vt_size > self.n:
            raise self.fail(f"{what}: the field table at byte {vt} has an invalid size ({vt_size} bytes)")
        if t_size < 4 or pos + t_size > self.n:
            raise self.fail(f"{what}: the table at byte {pos} claims {t_size} bytes, past the end of the file")
        return Table(self, pos, vt, vt_size, t_size, what)

    def root(self) -> Table:
        return self.table(self.deref(0, "root table"), "model")


class Table:
    __slots__ = ("r", "pos", "vt", "vt_size", "t_size", "what")

    def __init__(self, r: Reader, pos: int, vt: int, vt_size: int, t_size: int, what: str) -> None:
        self.r, self.pos, self.vt, self.vt_size, self.t_size, self.what = r, pos, vt, vt_size, t_size, what

    def _field(self, slot: int, size: int, name: str) -> int:
        """Absolute position of field number `slot`, or 0 when absent."""
        vo = 4 + 2 * slot
        if vo + 2 > self.vt_size:
            return 0
        off: int = _U16.unpack_from(self.r.buf, self.vt + vo)[0]
        if off == 0:
            return 0
        if off + size > self.t_size:
            raise self.r.fail(
                f"{self.what}: field '{name}' at offset {off} lies outside its table ({self.t_size} bytes)"
            )
        return self.pos + off

    def scalar(self, slot: int, fmt: str, name: str, default: int = 0) -> int:
        p = self._field(slot, _SIZES[fmt], name)
        return default if p == 0 else _SCALARS[fmt].unpack_from(self.r.buf, p)[0]

    def table(self, slot: int, name: str, what: str | None = None) -> Table | None:
        p = self._field(slot, 4, name)
        if p == 0:
            return None
        label = what or f"{self.what}, {name}"
        return self.r.table(self.r.deref(p, label), label)

    def vector(self, slot: int, elem_size: int, name: str, limit: int | None = None) -> tuple[int, int]:
        """(absolute start of the elements, length) of a vector field; (0, 0) when absent."""
        p = self._field(slot, 4, name)
        if p == 0:
            return 0, 0
        label = f"{self.what}, '{name}'"
        start = self.r.deref(p, label)
        if self.r.trace:
            self.r.trace("length", start)
        length = self.r.scalar("I", start, label)
        if limit is not None and length > limit:
            raise self.r.fail(f"{label} has {length} entries, more than this tool accepts ({limit})")
        if start + 4 + length * elem_size > self.r.n:
            raise self.r.fail(
                f"{label}: {length} entries of {elem_size} bytes starting at byte {start + 4} "
                f"run past the end of the file ({self.r.n} bytes)"
            )
        return start + 4, length

    def array(self, slot: int, fmt: str, name: str, limit: int | None = None) -> np.ndarray:
        """A vector of scalars as a numpy array (empty when absent)."""
        start, length = self.vector(slot, _SIZES[fmt], name, limit)
        if length == 0:
            return np.empty(0, _NP[fmt])
        return np.frombuffer(self.r.buf, dtype=_NP[fmt], count=length, offset=start)

    def tables(self, slot: int, name: str, item: str, limit: int | None = None) -> list[Table]:
        """A vector of tables; `item` is a label prefix ("tensor" -> "tensor 3")."""
        start, length = self.vector(slot, 4, name, limit)
        return [self.r.table(self.r.deref(start + 4 * i, f"{item} {i}"), f"{item} {i}") for i in range(length)]

    def string(self, slot: int, name: str) -> bytes | None:
        start, length = self.vector(slot, 1, name)
        if start == 0:
            return None
        if start + length >= self.r.n or self.r.buf[start + length] != 0:
            raise self.r.fail(f"{self.what}: the string '{name}' at byte {start} is not terminated")
        return bytes(self.r.buf[start : start + length])
