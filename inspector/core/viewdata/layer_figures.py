"""Per-layer figures the views show for every layer of a comparison, computed once per result
(in the worker thread that produced it, `warm`), so a result arriving on a 1,500-layer model
costs the GUI thread a lookup, not 15,000 `np.median` calls: each layer's worst channel or
slice SQNR (`worst_part_db`) and its verdict line (`part_verdict`, or None).

`layer_figures(result)` is memoized by the result object (dropped with it)."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar, cast

from inspector.core.compare.inside import part_verdict, worst_part_db
from inspector.core.compare.result import ComparisonResult
from inspector.core.progress import give_way, paced


@dataclass(frozen=True)
class LayerFigures:
    worst_part_db: tuple[float | None, ...]  # per position in result.layers
    verdict: tuple[str | None, ...]  # per position: the part verdict line, or None


T = TypeVar("T")

_memo: dict[int, LayerFigures] = {}
_lock = threading.Lock()


def _compute(result: ComparisonResult) -> LayerFigures:
    worst, verdict = [], []
    for layer in paced(result.layers):
        worst.append(worst_part_db(layer.channels, layer.slices))
        verdict.append(part_verdict(f"op {layer.op_index}", layer.metrics.sqnr_db, layer.channels, layer.slices))
    return LayerFigures(tuple(worst), tuple(verdict))


def layer_figures(result: ComparisonResult) -> LayerFigures:
    """The figures of `result`, computed on first use and kept while the result lives."""
    key = id(result)
    with _lock:
        hit = _memo.get(key)
    if hit is not None:
        return hit
    figs = _compute(result)
    with _lock:
        if key not in _memo:
            _memo[key] = figs
            weakref.finalize(result, _memo.pop, key, None)
        return _memo[key]


_kept: dict[tuple[int, object], object] = {}


def kept(result: ComparisonResult, key: object, build: Callable[[], T]) -> T:
    """`build()` for `result` and `key`, made once and kept while the result lives (the layer
    lists' columns, made in the worker by `warm` and looked up when the result arrives)."""
    k = (id(result), key)
    with _lock:
        if k in _kept:
            return cast(T, _kept[k])
    value = build()
    with _lock:
        if k not in _kept:
            _kept[k] = value
            weakref.finalize(result, _kept.pop, k, None)
        return cast(T, _kept[k])


_warmers: list[Callable[[ComparisonResult], object]] = []


def on_warm(fn: Callable[[ComparisonResult], object]) -> None:
    """Register more per-result work for `warm` (modules that build on these figures)."""
    _warmers.append(fn)


def warm(result: ComparisonResult | None) -> ComparisonResult | None:
    """Compute `result`'s figures now (call it where the result is made, off the GUI thread)."""
    if result is not None:
        layer_figures(result)
        for fn in list(_warmers):
            give_way()  # each warmer walks the 1,500 layers of a large model
            fn(result)
    return result
