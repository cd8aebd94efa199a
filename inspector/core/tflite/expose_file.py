"""The exposing copy of a big model written to a temporary file, never held in memory.

For a big model `expose_intermediates`' in-memory copy would double the process's memory (the
interpreter keeps the bytes it is given), and a file over 2 GB cannot be patched in place at
all: a flatbuffer offset cannot reach past 2 GB. Models that big keep their weights after the
flatbuffer (`Buffer.offset` / `size`, absolute from the model's start). So the copy is written
to a temporary file as: the flatbuffer part patched as `patch_outputs` does (the new outputs
vector appended after it), padding, then the weight data copied by the kernel
(`os.copy_file_range`, no pass through Python), every `Buffer.offset` (and operator
`large_custom_options_offset`) moved by the same multiple of 4096 bytes so each buffer keeps
its alignment. The interpreter then maps that file as it would map the original.
"""

from __future__ import annotations

import mmap
import os
import tempfile
from typing import BinaryIO

import flatbuffers
import tflite

from inspector.core.errors import ModelFormatError
from inspector.core.tflite.litertlm import section_extent
from inspector.core.tflite.rewrite import patch_outputs

ALIGN = 4096


def _offset_fields(head: bytes | bytearray | memoryview) -> list[tuple[int, int]]:
    """(absolute position of the uint64 field, value) of every offset into data after the flatbuffer."""
    fb = tflite.Model.GetRootAs(head, 0)
    out = []
    for i in range(fb.BuffersLength()):
        b = fb.Buffers(i)
        o = b._tab.Offset(6)  # Buffer.offset (slot 1)
        if o:
            v = b._tab.Get(flatbuffers.number_types.Uint64Flags, b._tab.Pos + o)
            if v > 1:
                out.append((b._tab.Pos + o, int(v)))
    for s in range(fb.SubgraphsLength()):
        sg = fb.Subgraphs(s)
        for k in range(sg.OperatorsLength()):
            op = sg.Operators(k)
            o = op._tab.Offset(22)  # Operator.large_custom_options_offset (slot 9)
            if o:
                v = op._tab.Get(flatbuffers.number_types.Uint64Flags, op._tab.Pos + o)
                if v > 1:
                    out.append((op._tab.Pos + o, int(v)))
    return out


def data_start(path: str) -> tuple[int, int]:
    """(end of the flatbuffer part = where weight data after it starts, model size)."""
    ext = section_extent(path)
    file, base, n = (path, 0, os.path.getsize(path)) if ext is None else ext
    with open(file, "rb") as f:
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            view = memoryview(mm)[base : base + n]
            try:
                fields = _offset_fields(view)
            finally:
                view.release()
        finally:
            mm.close()
    return (min(v for _, v in fields) if fields else n), n


def expose_to_file(path: str, subgraph: int, outputs: tuple[int, ...], folder: str | None = None) -> str:
    """Write the exposing copy of the model at `path` to a new temporary file; returns its path.

    The caller deletes the file (an interpreter that mapped it keeps it readable on POSIX).
    """
    ext = section_extent(path)
    file, base = (path, 0) if ext is None else (ext[0], ext[1])
    d0, n = data_start(path)
    with open(file, "rb") as src:
        src.seek(base)
        head = bytearray(src.read(d0))
        found = patch_outputs(head, subgraph, outputs, size=d0)
        if found is None:
            raise ModelFormatError("cannot expose the intermediate tensors of this model (unusual layout)", path)
        patched = bytearray(found)
        delta = 0
        if d0 < n:  # data follows: move it past the new vector, keeping its alignment
            delta = -(-(len(patched) - d0) // ALIGN) * ALIGN
            for pos, value in _offset_fields(head):
                patched[pos : pos + 8] = (value + delta).to_bytes(8, "little")
            patched += bytes(d0 + delta - len(patched))
        fd, tmp = tempfile.mkstemp(prefix="inspector-exposed-", suffix=".tflite", dir=folder)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(patched)
                out.flush()
                _copy_range(src, out, base + d0, n - d0)
        except BaseException:
            os.unlink(tmp)
            raise
    return tmp


def _copy_range(src: BinaryIO, dst: BinaryIO, offset: int, count: int) -> None:
    """Copy `count` bytes of `src` from `offset` to the end of `dst`, in the kernel where it can."""
    done = 0
    try:
        while done < count:
            k = os.copy_file_range(src.fileno(), dst.fileno(), count - done, offset + done)
            if k <= 0:
                break
            done += k
    except (AttributeError, OSError):
        pass
    if done < count:
        src.seek(offset + done)
        dst.seek(0, os.SEEK_END)
        remaining = count - done
        while remaining > 0:
            chunk = src.read(min(remaining, 64 * 2**20))
            if not chunk:
                raise ModelFormatError(f"the model ends {remaining} bytes early", src.name)
            dst.write(chunk)
            remaining -= len(chunk)


__all__ = ["data_start", "expose_to_file"]
