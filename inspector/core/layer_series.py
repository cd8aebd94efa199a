"""Plot-ready series of a comparison: one value per layer against depth, for a chosen metric.

x is the depth (position of the layer in the quantized model's execution order), so a
baseline run, a per-sample run and the main run line up layer by layer. Values that cannot be
drawn as they are get a drawable stand-in and a note: infinite SQNR (the tensors are equal), and SQNR of at least
`NEAR_EXACT_DB` (equal up to float rounding, e.g. an isolated MAX_POOL), are drawn on one line 10 dB
above the best other SQNR (`exact_sqnr_position`), so they do not squash the scale; zero error on a log axis at a floor below the smallest nonzero value.
Also the error grade behind the colour-coded SQNR column of the layer lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from inspector.core.compare_result import ComparisonResult, LayerResult
from inspector.core.metrics import Metrics


@dataclass(frozen=True)
class MetricChoice:
    key: str  # Metrics attribute
    label: str
    unit: str = ""
    log: bool = False  # log y axis
    higher_is_better: bool = False


METRICS: tuple[MetricChoice, ...] = (
    MetricChoice("sqnr_db", "SQNR", " dB", higher_is_better=True),
    MetricChoice("mse", "MSE", log=True),
    MetricChoice("max_abs", "max |error|", log=True),
    MetricChoice("cosine", "cosine similarity", higher_is_better=True),
    MetricChoice("rmse_over_scale", "RMSE / scale"),
    MetricChoice("clip_rate", "clip rate"),
    MetricChoice("range_use", "range use"),
)
METRIC_BY_KEY = {m.key: m for m in METRICS}
SQNR_EXACT_DB = 120.0  # where "equal tensors" (infinite SQNR) is drawn when no SQNR is finite
NEAR_EXACT_DB = 100.0  # at or above: equal up to float rounding
GOOD_DB, BAD_DB = 30.0, 10.0  # SQNR at or above GOOD is green, at or below BAD red


EXACT_NOTE = "equal tensors (SQNR ∞)"


@dataclass(frozen=True)
class LayerSeries:
    name: str
    depth: np.ndarray  # x: 0..n-1 (position in result.layers)
    values: np.ndarray  # y, drawable (NaN where the metric does not apply)
    raw: tuple[float | None, ...]  # the metric as computed (inf kept), per layer
    layer_index: tuple[int, ...]  # position in result.layers
    notes: tuple[str, ...]  # per point: "" or why the drawn value differs from raw


def metric_value(m: Metrics | None, key: str) -> float | None:
    if m is None:
        return None
    v = getattr(m, key)
    return None if v is None else float(v)


def exact_sqnr_position(*results: ComparisonResult | None) -> float:
    """Where to draw infinite SQNR: 10 dB above the best finite layer SQNR, rounded up to 10."""
    best = [
        v
        for r in results
        if r is not None
        for layer in r.layers
        for m in (layer.metrics, layer.isolated)
        if m is not None and math.isfinite(v := m.sqnr_db) and v < NEAR_EXACT_DB
    ]
    return SQNR_EXACT_DB if not best else 10.0 * math.ceil((max(best) + 10.0) / 10.0)


def layer_series(
    result: ComparisonResult, key: str = "sqnr_db", isolated: bool = False, name: str = "", exact_at: float | None = None
) -> LayerSeries:
    """The chosen metric for every layer of `result` (isolated error when `isolated`)."""
    top = exact_sqnr_position(result) if exact_at is None else exact_at
    choice = METRIC_BY_KEY[key]
    raw = [metric_value(layer.isolated if isolated else layer.metrics, key) for layer in result.layers]
    vals = np.array([np.nan if v is None else v for v in raw], np.float64)
    notes = [""] * len(raw)
    if key == "sqnr_db":
        for i, v in enumerate(raw):
            if v is not None and math.isinf(v):
                vals[i] = top if v > 0 else np.nan
                notes[i] = EXACT_NOTE if v > 0 else "float reference is all zeros"
            elif v is not None and v >= NEAR_EXACT_DB:
                vals[i] = top
                notes[i] = f"{v:.0f} dB: equal up to float rounding, drawn on the ∞ line"
    if choice.log:
        pos = vals[np.isfinite(vals) & (vals > 0)]
        floor = float(pos.min()) / 10 if pos.size else 1e-12
        for i, v in enumerate(vals):
            if np.isfinite(v) and v <= 0:
                vals[i] = floor
                notes[i] = "zero (drawn at the axis floor)"
    n = len(raw)
    return LayerSeries(name, np.arange(n, dtype=np.float64), vals, tuple(raw), tuple(range(n)), tuple(notes))


def format_value(v: float | None, key: str) -> str:
    if v is None:
        return "n/a"
    if math.isinf(v):
        return "∞" if v > 0 else "−∞"
    unit = METRIC_BY_KEY[key].unit
    if key in ("clip_rate", "range_use"):
        return f"{100 * v:.3g} %"
    if key == "cosine":
        return f"{v:.6f}"
    return f"{v:.4g}{unit}"


def layer_tooltip(layer: LayerResult, depth: int, key: str, raw: float | None, note: str = "") -> str:
    iso = "" if layer.isolated is None else f"\nisolated: {format_value(metric_value(layer.isolated, key), key)}"
    extra = f" ({note})" if note else ""
    return (
        f"#{depth} op {layer.op_index} {layer.op_type}\n{layer.tensor_name}\n"
        f"{METRIC_BY_KEY[key].label}: {format_value(raw, key)}{extra}{iso}"
    )


def error_grade(sqnr_db: float | None) -> float | None:
    """0 = good (>= GOOD_DB), 1 = bad (<= BAD_DB), linear between; None when unknown."""
    if sqnr_db is None or math.isnan(sqnr_db):
        return None
    if sqnr_db >= GOOD_DB:
        return 0.0
    if sqnr_db <= BAD_DB:
        return 1.0
    return (GOOD_DB - sqnr_db) / (GOOD_DB - BAD_DB)


def op_errors(result: ComparisonResult, float_side: bool = False) -> dict[int, LayerResult]:
    """Layer result per op index of the quantized model (or of the float model's matching op)."""
    out: dict[int, LayerResult] = {}
    for layer in result.layers:
        op = layer.float_op_index if float_side else layer.op_index
        if op is not None and op not in out:
            out[op] = layer
    return out
