"""What the runtime parity view draws: per layer of B (op index on the x axis) the share of
elements that differ and the largest difference in LSB, the first divergence, and the table
rows with the spec-mismatch column ("which kernel departs from the spec's integer math")."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.core.compare.parity_result import Difference, LayerParity, RuntimeParityResult


@dataclass(frozen=True)
class ParitySeries:
    op_index: np.ndarray  # B's op index per layer (the layer identifier everywhere)
    differ_pct: np.ndarray  # share of elements that differ, in percent
    max_lsb: np.ndarray  # largest difference in LSB (NaN where the tensor has no scale)
    first: int | None  # position (in the arrays) of the first divergence


def parity_series(result: RuntimeParityResult) -> ParitySeries:
    layers = result.layers
    first = next((i for i, layer in enumerate(layers) if layer.first_divergence), None)
    return ParitySeries(
        op_index=np.array([layer.op_index for layer in layers], np.int64),
        differ_pct=np.array([100.0 * layer.differ_share for layer in layers], np.float64),
        max_lsb=np.array([np.nan if layer.max_lsb is None else layer.max_lsb for layer in layers], np.float64),
        first=first,
    )


def format_share(share: float) -> str:
    """Percent with two decimals in one format for every row ('0.00 %' only when nothing differs;
    a tiny nonzero share is '< 0.01 %', never rounded to a misleading 0.00 %)."""
    if share == 0:
        return "0.00 %"
    pct = 100.0 * share
    return f"{pct:.2f} %" if pct >= 0.01 else "< 0.01 %"


def format_lsb(v: float | None) -> str:
    return "n/a" if v is None else f"{v:g}"


def format_spec(d: Difference | None) -> str:
    """One side against the spec's integer math: 'exact' or the share and the max LSB."""
    if d is None:
        return ""
    return "exact" if d.differ_share == 0 else f"{format_share(d.differ_share)}, max {format_lsb(d.max_lsb)} LSB"


def spec_cells(layer: LayerParity, labels: tuple[str, str]) -> tuple[str, str]:
    """The spec-mismatch cells of both sides ('—' for ops without an integer reimplementation)."""
    if layer.spec_mismatch is None:
        return ("—", "—")
    m = layer.spec_mismatch
    return format_spec(m.get(labels[0])), format_spec(m.get(labels[1]))


def parity_headline(result: RuntimeParityResult) -> str:
    """One line: which sides, how many samples, where they first diverge, the outputs."""
    a, b = result.labels
    first = result.first_divergence
    where = ("no difference between the two sides" if first is None
             else f"first divergence at op {first.op_index} {first.op_type}")  # fmt: skip
    outs = "; ".join(f"output {o.name}: {format_share(o.differ_share)} differ, max {format_lsb(o.max_lsb)} LSB"
                     for o in result.outputs)  # fmt: skip
    random = " random" if result.samples_are_random else ""
    return f"{a} vs {b}, {result.samples}{random} samples: {where}" + (f". {outs}" if outs else "")
