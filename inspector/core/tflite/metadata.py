"""Read the input normalization (mean, std) from a model's TFLite metadata, if it has one.

The "TFLITE_METADATA" buffer is a flatbuffer (file identifier "M001") of the TFLite Support
metadata schema; only the path ModelMetadata.subgraph_metadata[0].input_tensor_metadata[0]
.process_units[*] with options of type NormalizationOptions(mean[], std[]) is read, with the
plain `flatbuffers` table accessors (no tflite-support dependency).
"""

from __future__ import annotations

import flatbuffers
import numpy as np
from flatbuffers.table import Table

from inspector.core.tflite.model import Model

METADATA_NAME = "TFLITE_METADATA"
_NORMALIZATION_OPTIONS = 1  # ProcessUnitOptions union: NONE=0, NormalizationOptions=1, ...


def _table(buf: bytes, pos: int) -> Table:
    return Table(buf, pos)


def _field(tab: Table, index: int) -> int:
    off: int = tab.Offset(4 + 2 * index)  # flatbuffers' Table is untyped
    return off


def _vector_tables(tab: Table, index: int) -> list[Table]:
    o = _field(tab, index)
    if not o:
        return []
    start = tab.Vector(o)
    return [_table(tab.Bytes, tab.Indirect(start + 4 * i)) for i in range(tab.VectorLen(o))]


def _float_vector(tab: Table, index: int) -> np.ndarray:
    o = _field(tab, index)
    if not o:
        return np.empty(0, np.float32)
    values: np.ndarray = tab.GetVectorAsNumpy(flatbuffers.number_types.Float32Flags, o).astype(np.float32)
    return values


def parse_normalization(buf: bytes) -> tuple[np.ndarray, np.ndarray] | None:
    """(mean, std) of the first input in a metadata flatbuffer, or None."""
    if len(buf) < 8:
        return None
    root = _table(buf, flatbuffers.encode.Get(flatbuffers.packer.uoffset, buf, 0))
    subgraphs = _vector_tables(root, 3)  # ModelMetadata.subgraph_metadata
    if not subgraphs:
        return None
    inputs = _vector_tables(subgraphs[0], 2)  # SubGraphMetadata.input_tensor_metadata
    if not inputs:
        return None
    for unit in _vector_tables(inputs[0], 4):  # TensorMetadata.process_units
        o = _field(unit, 0)  # options_type
        if not o or unit.Get(flatbuffers.number_types.Uint8Flags, o + unit.Pos) != _NORMALIZATION_OPTIONS:
            continue
        o = _field(unit, 1)  # options
        if not o:
            continue
        opts = _table(buf, unit.Indirect(o + unit.Pos))
        mean, std = _float_vector(opts, 0), _float_vector(opts, 1)
        if mean.size and std.size and np.all(std != 0):
            return mean, std
    return None


def input_normalization(model: Model) -> tuple[np.ndarray, np.ndarray] | None:
    data = model.metadata_bytes(METADATA_NAME)
    if not data:
        return None
    try:
        return parse_normalization(data)
    except Exception:  # malformed metadata: fall back to the default, never crash
        return None
