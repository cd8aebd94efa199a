"""Consistency of a sparse tensor's layout (TFLite sparsity: traversal order, blocks, CSR).

The runtime's sparse kernels and DENSIFY index the stored values with these arrays without
checking them; a corrupt segment or index array makes them read out of bounds (the fuzz
corpus found such SIGSEGVs). The rules follow the TFLite sparsity format: for a rank-n tensor
with k block dimensions, `traversal_order` lists n + k dimensions (a permutation of 0..n-1,
then of n..n+k-1), `block_map[j]` is the original dimension block j splits, `dim_metadata`
is in traversal order; a DENSE dimension multiplies the count of values, a SPARSE_CSR one
has count + 1 non-decreasing segments from 0 and indices below its size, and its count of
values becomes the number of indices.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

DENSE, SPARSE_CSR = 0, 1


@dataclass
class DimMeta:
    format: int
    dense_size: int
    segments: np.ndarray | None
    indices: np.ndarray | None


def sparse_value_count(shape: list[int], traversal: np.ndarray, block_map: np.ndarray, dims: list[DimMeta]) -> int | str:
    """Number of stored values the layout describes, or the reason it is inconsistent."""
    n, total = len(shape), len(traversal)
    if total < n or len(dims) != total:
        return f"its traversal order has {total} dimensions and {len(dims)} dimension records for a rank-{n} tensor"
    k = total - n
    if len(block_map) != k:
        return f"it has {k} block dimensions but a block map of {len(block_map)}"
    order = [int(x) for x in traversal]
    if sorted(order[:n]) != list(range(n)) or sorted(order[n:]) != list(range(n, total)):
        return f"its traversal order {order} is not a permutation of its dimensions"
    sizes = [int(d) for d in shape] + [0] * k
    for j in range(k):
        b, target = dims[order.index(n + j)].dense_size, int(block_map[j])
        if not 0 <= target < n:
            return f"block {j} maps to dimension {target} of a rank-{n} tensor"
        if b <= 0 or sizes[target] % b:
            return f"block {j} has size {b}, which does not divide dimension {target} ({shape[target]})"
        sizes[n + j] = b
        sizes[target] //= b
    count = 1
    for i, d in enumerate(order):
        meta = dims[i]
        if meta.format == DENSE:
            if meta.dense_size != sizes[d]:
                return f"dense dimension {d} has size {meta.dense_size}, expected {sizes[d]}"
            count *= sizes[d]
        elif meta.format == SPARSE_CSR:
            seg, idx = meta.segments, meta.indices
            if seg is None or idx is None:
                return f"sparse dimension {d} has no segment or index array"
            if len(seg) != count + 1:
                return f"sparse dimension {d} has {len(seg)} segments, expected {count + 1}"
            seg64 = seg.astype(np.int64)
            if seg64[0] != 0 or (np.diff(seg64) < 0).any() or seg64[-1] != len(idx):
                return f"sparse dimension {d} has segments that do not run from 0 up to its {len(idx)} indices"
            if len(idx) and (int(idx.min()) < 0 or int(idx.max()) >= sizes[d]):
                return f"sparse dimension {d} has an index outside 0..{sizes[d] - 1}"
            count = len(idx)
        else:
            return f"dimension {d} has unknown format {meta.format}"
    return count
