"""Expand a TFLite sparse constant (traversal order, block map, DENSE/CSR levels) to a dense array.

The quantizer reads constants as dense arrays of the tensor's shape and fails on sparse weights
("cannot reshape array of size 384 into shape (64,64)"), so requantization densifies them first.
This mirrors TFLite's FormatConverter::SparseToDense, vectorised level by level.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

DENSE = 0
SPARSE_CSR = 1


@dataclass(frozen=True)
class DimLevel:
    """One traversal level: DENSE with a size, or CSR with segment and index arrays."""

    format: int
    dense_size: int = 0
    segments: np.ndarray | None = None
    indices: np.ndarray | None = None


def densify(
    values: np.ndarray,
    shape: Sequence[int],
    traversal_order: Sequence[int],
    block_map: Sequence[int],
    levels: Sequence[DimLevel],
) -> np.ndarray:
    """Dense array of `shape` from the stored `values` of a sparse tensor (zeros elsewhere)."""
    rank = len(shape)
    n_levels = len(traversal_order)
    if len(levels) != n_levels or n_levels != rank + len(block_map):
        raise ValueError("sparsity metadata does not match the tensor rank")
    block_size = {}
    for k, dim in enumerate(block_map):
        level = list(traversal_order).index(rank + k)
        block_size[dim] = levels[level].dense_size

    pos = np.zeros(1, dtype=np.int64)  # flat position within the current level
    coords = np.zeros((1, n_levels), dtype=np.int64)  # expanded coordinate of each entry
    for level, meta in enumerate(levels):
        dim = traversal_order[level]
        if meta.format == DENSE:
            size = int(meta.dense_size)
            new_pos = (pos[:, None] * size + np.arange(size)[None, :]).reshape(-1)
            coords = np.repeat(coords, size, axis=0)
            coords[:, dim] = np.tile(np.arange(size), len(pos))
        else:
            seg = np.asarray(meta.segments, dtype=np.int64)
            idx = np.asarray(meta.indices, dtype=np.int64)
            starts, ends = seg[pos], seg[pos + 1]
            counts = ends - starts
            owner = np.repeat(np.arange(len(pos)), counts)
            offset = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
            new_pos = starts[owner] + offset
            coords = coords[owner]
            coords[:, dim] = idx[new_pos]
        pos = new_pos

    flat_values = np.asarray(values).reshape(-1)
    if len(pos) and pos.max() >= flat_values.size:
        raise ValueError("sparse tensor has fewer stored values than its metadata describes")
    dense = np.zeros(tuple(shape), dtype=flat_values.dtype)
    full = []
    for d in range(rank):
        c = coords[:, d]
        if d in block_size:
            k = list(block_map).index(d)
            c = c * block_size[d] + coords[:, rank + k]
        full.append(c)
    dense[tuple(full)] = flat_values[pos]
    return dense
