"""Read `.litertlm` bundles (LiteRT-LM): a header, then sections (TFLite models, tokenizer, metadata).

Layout (litert-lm-builder's `litertlm_core` / `litertlm_builder._build_sections`): bytes 0-7
"LITERTLM", then major, minor, patch versions (uint32 each), zero padding to byte 24, the end
of the header (uint64) at byte 24, and from byte 32 a `LiteRTLMMetaData` flatbuffer:
system_metadata (key/value pairs) and section_metadata, one `SectionObject` per section:
items (key/value pairs), begin_offset and end_offset (uint64, absolute in the file), data_type
(AnySectionDataType). Sections start on 16 KiB boundaries.

A TFLite section is addressed as `BUNDLE.litertlm#N` (N: the section's index, as `info` lists
it) wherever a model path is accepted; it is read as a byte range of the mapped file (zero copy).
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass
from typing import Any

from flatbuffers.table import Table

from inspector.core.errors import ModelFormatError

MAGIC = b"LITERTLM"
HEADER_BEGIN = 32
SECTION_TYPES = {
    0: "none",
    1: "generic_binary_data",
    2: "deprecated",
    3: "tflite_model",
    4: "sp_tokenizer",
    5: "llm_metadata_proto",
    6: "hf_tokenizer_zlib",
    7: "tflite_weights",
    8: "embedding_metadata_proto",
    9: "executor_metadata_proto",
    10: "tts_metadata_proto",
    11: "asr_metadata_proto",
}
TFLITE_SECTION = 3
# VData union member -> struct format of its single `value` field ("s": a string).
_VDATA = {1: "B", 2: "b", 3: "H", 4: "h", 5: "I", 6: "i", 7: "f", 8: "?", 9: "s", 10: "Q", 11: "q", 12: "d"}
_ADDRESS = re.compile(r"^(?P<file>.+\.litertlm)#(?P<index>\d+)$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Section:
    index: int
    kind: str  # SECTION_TYPES name
    offset: int  # absolute byte offset in the bundle
    size: int
    items: tuple[tuple[str, object], ...]  # the section's metadata (model_type, backend_constraint, ...)

    @property
    def is_tflite(self) -> bool:
        return self.kind == "tflite_model"

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "kind": self.kind, "offset": self.offset, "size": self.size,
                "metadata": {k: v for k, v in self.items}}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Bundle:
    path: str
    version: tuple[int, int, int]
    system: tuple[tuple[str, object], ...]
    sections: tuple[Section, ...]

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "version": ".".join(map(str, self.version)),
                "system_metadata": {k: v for k, v in self.system},
                "sections": [s.to_json() for s in self.sections]}  # fmt: skip


def is_bundle_file(path: str | os.PathLike[str]) -> bool:
    """True when the file starts with the LITERTLM magic."""
    try:
        with open(path, "rb") as f:
            return f.read(8) == MAGIC
    except OSError:
        return False


def split_address(path: str | os.PathLike[str]) -> tuple[str, int | None]:
    """('bundle.litertlm', N) for 'bundle.litertlm#N' (unless a file has that very name), else (path, None)."""
    s = str(path)
    m = _ADDRESS.match(s)
    if m is None or os.path.exists(s):
        return s, None
    return m.group("file"), int(m.group("index"))


def read_bundle(path: str | os.PathLike[str], buf: bytes | bytearray | memoryview | mmap.mmap | None = None) -> Bundle:
    """Parse the header of a .litertlm file (or of `buf`, its mapped bytes)."""
    p = str(path)
    if buf is None:
        try:
            with open(p, "rb") as f:
                head = f.read(HEADER_BEGIN)
                if len(head) < HEADER_BEGIN or head[:8] != MAGIC:
                    raise ModelFormatError("not a .litertlm bundle (no LITERTLM magic)", p)
                end = int.from_bytes(head[24:32], "little")
                size = os.fstat(f.fileno()).st_size
                if not HEADER_BEGIN < end <= size or end > 64 * 2**20:
                    raise ModelFormatError(f"the header end ({end}) lies outside the file ({size} bytes)", p)
                data = head + f.read(end - HEADER_BEGIN)
        except OSError as e:
            raise ModelFormatError(f"cannot read the file ({e.strerror or e})", p) from e
    else:
        size = len(buf)
        if size < HEADER_BEGIN or bytes(buf[:8]) != MAGIC:
            raise ModelFormatError("not a .litertlm bundle (no LITERTLM magic)", p)
        end = int.from_bytes(bytes(buf[24:32]), "little")
        if not HEADER_BEGIN < end <= size:
            raise ModelFormatError(f"the header end ({end}) lies outside the file ({size} bytes)", p)
        data = bytes(buf[:end])
    try:
        return _parse(p, data, size)
    except ModelFormatError:
        raise
    except Exception as e:  # bad flatbuffer offsets raise struct/index errors
        raise ModelFormatError(f"malformed .litertlm header ({type(e).__name__}: {e})", p) from e


def _parse(path: str, data: bytes, file_size: int) -> Bundle:
    version = struct.unpack_from("<3I", data, 8)
    fb = bytearray(data[HEADER_BEGIN:])
    root = Table(fb, int.from_bytes(fb[0:4], "little"))
    system = _pairs(_table(root, 0))
    sections = []
    meta = _table(root, 1)
    for i, obj in enumerate(_tables(meta, 0) if meta is not None else []):
        begin, end = _scalar(obj, 1, "Q"), _scalar(obj, 2, "Q")
        kind = SECTION_TYPES.get(_scalar(obj, 3, "B"), f"type_{_scalar(obj, 3, 'B')}")
        if not 0 < begin <= end <= file_size:
            raise ModelFormatError(f"section {i} spans bytes {begin}-{end}, outside the file ({file_size} bytes)", path)
        sections.append(Section(i, kind, begin, end - begin, _pairs(obj)))
    return Bundle(path, (int(version[0]), int(version[1]), int(version[2])), system, tuple(sections))


def _field(t: Table, slot: int) -> int:
    off: int = t.Offset(4 + 2 * slot)  # flatbuffers' Table is untyped
    return off


def _table(t: Table | None, slot: int) -> Table | None:
    if t is None:
        return None
    o = _field(t, slot)
    return Table(t.Bytes, t.Indirect(o + t.Pos)) if o else None


def _tables(t: Table, slot: int) -> list[Table]:
    o = _field(t, slot)
    if not o:
        return []
    start, n = t.Vector(o), t.VectorLen(o)
    return [Table(t.Bytes, t.Indirect(start + 4 * j)) for j in range(n)]


def _scalar(t: Table, slot: int, fmt: str) -> Any:  # int, float or bool, by fmt
    o = _field(t, slot)
    return struct.unpack_from("<" + fmt, t.Bytes, t.Pos + o)[0] if o else 0


def _pairs(t: Table | None) -> tuple[tuple[str, object], ...]:
    """Key/value pairs of a table whose field 0 is a vector of KeyValuePair (key, value_type, value)."""
    if t is None:
        return ()
    out = []
    for kv in _tables(t, 0):
        ko = _field(kv, 0)
        key = kv.String(ko + kv.Pos).decode("utf-8", "replace") if ko else ""
        fmt = _VDATA.get(_scalar(kv, 1, "B"))
        vo = _field(kv, 2)
        value: object = None
        if fmt is not None and vo:
            inner = Table(kv.Bytes, kv.Indirect(vo + kv.Pos))
            if fmt == "s":
                so = _field(inner, 0)
                value = inner.String(so + inner.Pos).decode("utf-8", "replace") if so else ""
            else:
                value = _scalar(inner, 0, fmt)
        out.append((key, value))
    return tuple(out)


def section_extent(path: str | os.PathLike[str]) -> tuple[str, int, int] | None:
    """(bundle file, offset, size) of a TFLite section address 'X.litertlm#N'; None for a plain path.

    Raises ModelFormatError naming the bundle when N is not a TFLite section.
    """
    file, index = split_address(path)
    if index is None:
        return None
    bundle = read_bundle(file)
    if not 0 <= index < len(bundle.sections):
        raise ModelFormatError(f"no section {index}: the bundle has {len(bundle.sections)} ({_listing(bundle)})", file)
    sec = bundle.sections[index]
    if not sec.is_tflite:
        raise ModelFormatError(f"section {index} is {sec.kind}, not a TFLite model ({_listing(bundle)})", file)
    return file, sec.offset, sec.size


def _listing(bundle: Bundle) -> str:
    tfl = [str(s.index) for s in bundle.sections if s.is_tflite]
    return f"TFLite sections: {', '.join(tfl)}" if tfl else "no TFLite sections"


def require_section(path: str | os.PathLike[str]) -> None:
    """A bundle given where a model is expected: say how to address one of its TFLite sections."""
    bundle = read_bundle(path)
    tfl = [s.index for s in bundle.sections if s.is_tflite]
    how = f"give {path}#N, N one of {', '.join(map(str, tfl))}" if tfl else "it holds no TFLite model"
    raise ModelFormatError(f"a .litertlm bundle, not one model: {how} (see `tflite-inspector info`)", str(path))


def map_range(path: str | os.PathLike[str]) -> tuple[mmap.mmap, int, int, str]:
    """(read-only map of the whole file, offset, size, file) of a model path or a section address."""
    ext = section_extent(path)
    file = str(path) if ext is None else ext[0]
    try:
        with open(file, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size == 0:
                raise ModelFormatError("the file is empty", str(path))
            mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as e:
        raise ModelFormatError(f"cannot read the file ({e.strerror or e})", str(path)) from e
    if ext is None:
        if mm[:8] == MAGIC:
            mm.close()
            require_section(file)
        return mm, 0, size, file
    return mm, ext[1], ext[2], file


def read_model_bytes(path: str | os.PathLike[str], extra: int = 0) -> bytearray:
    """The model's bytes (a file, or a bundle's section) in a new buffer with `extra` spare bytes."""
    ext = section_extent(path)
    file, off = (str(path), 0) if ext is None else (ext[0], ext[1])
    n = os.path.getsize(file) if ext is None else ext[2]
    buf = bytearray(n + extra)
    with open(file, "rb") as f:
        f.seek(off)
        got = f.readinto(memoryview(buf)[:n])
    if got != n:
        raise ModelFormatError(f"read {got} of {n} bytes", str(path))
    return buf


def model_file_key(path: str | os.PathLike[str]) -> tuple[str, int, int] | tuple[str, int, int, int, int]:
    """Identity of a model's bytes for caches: real file, size, mtime (and the section)."""
    ext = section_extent(path)
    file = str(path) if ext is None else ext[0]
    st = os.stat(file)
    key = (os.path.realpath(file), st.st_size, st.st_mtime_ns)
    return key if ext is None else (*key, ext[1], ext[2])


__all__ = [
    "Bundle", "Section", "is_bundle_file", "map_range", "model_file_key", "read_bundle", "read_model_bytes",
    "section_extent", "split_address",
]  # fmt: skip
