"""Which files are Keras models: decided from the path alone, without importing TensorFlow
(the GUI's open dialog and the CLI dispatch call it on every path); and whether such a file can
be one at all (`check_model_input`: the HDF5 signature and end of file of a .h5, the zip archive of
a .keras, the protobuf of a SavedModel's saved_model.pb), read in milliseconds before the
TensorFlow import that takes half a minute."""

from __future__ import annotations

import os
import struct
import zipfile
from pathlib import Path

from inspector.core.errors import InputError

# The quantized twins `convert` can make (TF converter modes).
MODES = ("int8", "int8-io", "a16w8", "fp16", "dynamic")

KERAS_SUFFIXES = {".keras": "keras", ".h5": "h5", ".hdf5": "h5"}
# The published form, and the same extra from a clone of the repository (README "Installing with pip").
INSTALL_HINT = "pip install 'tflite-inspector[tensorflow]' (from a clone: pip install '.[tensorflow]')"


def keras_format(path: str | os.PathLike[str] | None) -> str | None:
    """'keras', 'h5' or 'saved_model' for a Keras file or a SavedModel folder, else None."""
    if path is None:
        return None
    p = Path(path)
    if p.is_dir():
        return "saved_model" if (p / "saved_model.pb").is_file() or (p / "saved_model.pbtxt").is_file() else None
    return KERAS_SUFFIXES.get(p.suffix.lower())


def is_keras_path(path: str | os.PathLike[str] | None) -> bool:
    return keras_format(path) is not None


def check_model_input(path: str | os.PathLike[str] | None) -> None:
    """InputError (one line naming the path) for a Keras file that does not exist or a folder that
    is not a SavedModel, before any worker or TensorFlow starts; other paths are left to their
    readers. Folders are never `.tflite` models, so the folder message holds for every command."""
    if path is None:
        return
    p = Path(path)
    if p.is_dir():
        if keras_format(p) is None:
            raise InputError("a folder that is not a SavedModel (no saved_model.pb in it); give a .tflite, .keras or .h5 "
                             "file or a SavedModel folder", str(path))  # fmt: skip
        if (p / "saved_model.pb").is_file():
            check_saved_model_pb(p / "saved_model.pb", str(path))
    elif p.suffix.lower() in KERAS_SUFFIXES:
        if not p.exists():
            raise InputError("no such file", str(path))
        if KERAS_SUFFIXES[p.suffix.lower()] == "h5":
            check_h5(p)
        else:
            check_keras_zip(p)


HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def check_h5(path: str | os.PathLike[str]) -> None:
    """InputError unless `path` starts like an HDF5 file (signature at 0, 512, 1024, ...) whose
    superblock's end-of-file address fits the file's size (a truncated copy fails here)."""
    name = os.fspath(path)
    try:
        size = os.path.getsize(name)
        with open(name, "rb") as f:
            where = 0
            while where == 0 or where + 8 <= size:
                f.seek(where)
                head = f.read(96)
                if head[:8] == HDF5_SIGNATURE:
                    break
                where = 512 if where == 0 else where * 2
            else:
                head = b""
    except OSError as e:
        raise InputError(f"cannot read the file: {e.strerror or e}", name) from None
    if head[:8] != HDF5_SIGNATURE:
        what = "an empty file" if size == 0 else "not an HDF5 file (no HDF5 signature)"
        raise InputError(f"{what}: a .h5 Keras model is an HDF5 file saved by model.save('model.h5')", name)
    eof = _hdf5_end_of_file(head)
    if eof is None:
        raise InputError("a damaged HDF5 file: its superblock is cut short or of an unknown version", name)
    base, end = eof
    if base + end > size:
        raise InputError(f"a truncated HDF5 file: it has {size:,} bytes, its header says {base + end:,} "
                         "(an interrupted copy or download?)", name)  # fmt: skip


def _hdf5_end_of_file(head: bytes) -> tuple[int, int] | None:
    """(base address, end-of-file address) from an HDF5 superblock (`head` starts at the
    signature), or None when it cannot be read."""
    if len(head) < 9:
        return None
    version = head[8]
    try:
        if version in (0, 1):
            size_offsets = head[13]
            at = 24 + (4 if version == 1 else 0)  # after the fixed fields (v1: indexed storage K)
            fields = 3  # base address, free-space address, end-of-file address
        elif version in (2, 3):
            size_offsets = head[9]
            at = 12
            fields = 3  # base address, superblock extension address, end-of-file address
        else:
            return None
        fmt = {2: "<H", 4: "<I", 8: "<Q"}.get(size_offsets)
        if fmt is None or len(head) < at + fields * size_offsets:
            return None
        values = [struct.unpack_from(fmt, head, at + i * size_offsets)[0] for i in range(fields)]
    except (IndexError, struct.error):
        return None
    return values[0], values[2]


def check_keras_zip(path: str | os.PathLike[str]) -> None:
    """InputError unless `path` is a zip archive holding a Keras model's config.json."""
    name = os.fspath(path)
    try:
        with open(name, "rb") as f:
            head = f.read(4)
        if head[:2] != b"PK":
            what = "an empty file" if not head else "not a zip archive"
            raise InputError(f"{what}: a .keras model is the zip archive model.save('model.keras') writes", name)
        with zipfile.ZipFile(name) as z:
            names = set(z.namelist())
    except zipfile.BadZipFile:
        raise InputError("a damaged or truncated .keras archive (its zip directory cannot be read)", name) from None
    except OSError as e:
        raise InputError(f"cannot read the file: {e.strerror or e}", name) from None
    if "config.json" not in names:
        raise InputError("a zip archive without config.json: not a .keras model", name)


# SavedModel's fields (saved_model.proto): 1 saved_model_schema_version (varint), 2 meta_graphs.
# MetaGraphDef's: 1 meta_info_def, 2 graph_def, 3 saver_def, 4 collection_def, 5 signature_def,
# 6 asset_file_def, 7 object_graph_def (all messages).
_SAVED_MODEL_FIELDS = {1: 0, 2: 2}
_META_GRAPH_FIELDS = {1: 2, 2: 2, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2}


def check_saved_model_pb(pb: Path, folder: str) -> None:
    """InputError unless saved_model.pb reads as a SavedModel protobuf with a meta graph (its
    top-level fields and each meta graph's fields, without reading the graphs themselves)."""
    try:
        data = pb.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read saved_model.pb: {e.strerror or e}", folder) from None
    bad = InputError("a SavedModel folder whose saved_model.pb is not a SavedModel protobuf (damaged, truncated "
                     "or not written by TensorFlow)", folder)  # fmt: skip
    fields = _wire_fields(data, 0, len(data), _SAVED_MODEL_FIELDS)
    if fields is None:
        raise bad
    metas = [(a, b) for number, a, b in fields if number == 2]
    if not metas or any(_wire_fields(data, a, b, _META_GRAPH_FIELDS) is None for a, b in metas):
        raise bad


def _varint(data: bytes, at: int, end: int) -> tuple[int, int] | None:
    value = shift = 0
    while at < end and shift < 64:
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, at
        shift += 7
    return None


def _wire_fields(data: bytes, at: int, end: int, allowed: dict[int, int]) -> list[tuple[int, int, int]] | None:
    """The (field number, start, end) of each field in data[at:end] when every field is one of
    `allowed` (number -> wire type) and lies inside the range; None otherwise."""
    out = []
    while at < end:
        tag = _varint(data, at, end)
        if tag is None:
            return None
        key, at = tag
        number, wire = key >> 3, key & 7
        if allowed.get(number) != wire:
            return None
        start = at
        if wire == 0:
            v = _varint(data, at, end)
            if v is None:
                return None
            at = v[1]
        else:  # 2: length-delimited
            n = _varint(data, at, end)
            if n is None or n[1] + n[0] > end:
                return None
            start, at = n[1], n[1] + n[0]
        out.append((number, start, at))
    return out
