"""What a node's colour means: the metrics a graph can be coloured by, each on a diverging scale
centred on the diagnosis's threshold (`compare.diagnosis.THRESHOLDS`), and the causes' colours.

A scale maps a value to t in [-1, 1]: -1 at its `bad` end, 0 at its `centre` (the threshold),
+1 at its `good` end; colours run red - pale yellow - blue (colour-blind safe, ColorBrewer RdYlBu).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from inspector.core.compare.diagnosis import THRESHOLDS
from inspector.core.compare.result import LayerResult
from inspector.core.graph.metric_names import METRICS
from inspector.core.stats.metric_table import format_metric, spec

METRIC_LABELS = {  # the colouring modes; a metric's own name is the metric table's
    "sqnr": "accumulated SQNR (dB)", "isolated": "own (isolated) SQNR (dB)", "worst_channel": "worst-channel SQNR (dB)",
    "clip": spec("clip_rate").label, "range_use": spec("range_use").label, "cause": "diagnosed cause",
}  # fmt: skip
RAMP = ("#d73027", "#fc8d59", "#fee090", "#91bfdb", "#4575b4")  # bad .. centre .. good
NO_DATA = "#e4e4e4"  # not compared (shape ops, unmatched, structure only)
CAUSE_FILLS = {
    "kernel": "#a50026", "input_range": "#bd0026", "clipping": "#e34a33", "resolution": "#fdae61", "weight_channels": "#c51b7d",
    "weight_rounding": "#8073ac", "bias_shift": "#e6c229", "mixed_ranges": "#35978f", "channel_imbalance": "#b35806",
    "inherited": "#c6dbef", "none": "#d9f0d3",
}  # fmt: skip
OTHER_CAUSE = "#9e9e9e"


@dataclass(frozen=True)
class Scale:
    bad: float
    centre: float
    good: float
    log: bool = False  # position by log10 (clip rates span decades)
    percent: bool = False

    def position(self, v: float | None) -> float | None:
        """t in [-1, 1] (bad .. good), None for no value."""
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None
        if math.isinf(v):
            return 1.0 if (v > 0) == (self.good > self.bad) else -1.0
        f = (lambda x: math.log10(max(x, 1e-12))) if self.log else (lambda x: x)
        x, c = f(v), f(self.centre)
        end = f(self.good) if (v >= self.centre) == (self.good > self.bad) else f(self.bad)
        t = (x - c) / (end - c) if end != c else 0.0
        t = max(0.0, min(1.0, t))
        return t if end == f(self.good) else -t

    def ticks(self) -> tuple[float, ...]:
        return (self.bad, self.centre, self.good)


_SQNR = Scale(bad=10.0, centre=THRESHOLDS.good_db, good=60.0)
SCALES: dict[str, Scale] = {
    "sqnr": _SQNR,
    "isolated": _SQNR,
    "worst_channel": _SQNR,
    "clip": Scale(bad=0.1, centre=THRESHOLDS.clip_rate, good=1e-5, log=True, percent=True),
    "range_use": Scale(bad=0.05, centre=THRESHOLDS.range_use, good=0.5, percent=True),
}


def ramp_colour(t: float) -> str:
    """The colour at t in [-1, 1] on RAMP (linear in RGB between its five stops)."""
    s = (t + 1) / 2 * (len(RAMP) - 1)
    i = min(int(s), len(RAMP) - 2)
    a, b, f = RAMP[i], RAMP[i + 1], s - i
    rgb = [round(int(a[k : k + 2], 16) * (1 - f) + int(b[k : k + 2], 16) * f) for k in (1, 3, 5)]
    return "#" + "".join(f"{c:02x}" for c in rgb)


def worst_channel_sqnr(layer: LayerResult) -> float | None:
    """The worst channel's SQNR: the `channels` summary when the comparison has it (issue 25:
    {"worst": {"sqnr_db"}}, a dict or an object), else the lowest per-channel SQNR."""
    ch = getattr(layer, "channels", None)
    if ch is not None:
        worst = ch.get("worst") if isinstance(ch, dict) else getattr(ch, "worst", None)
        v = worst.get("sqnr_db") if isinstance(worst, dict) else getattr(worst, "sqnr_db", None)
        if v is not None:
            return float(v)
    per = layer.metrics.per_channel_sqnr_db
    return float(min(per)) if per else None


def metric_value(layer: LayerResult, metric: str) -> float | None:
    """The number a node of `layer` is coloured by (None: this layer has none)."""
    m = layer.metrics
    if metric == "sqnr":
        return m.sqnr_db
    if metric == "isolated":
        return None if layer.isolated is None else layer.isolated.sqnr_db
    if metric == "worst_channel":
        return worst_channel_sqnr(layer)
    if metric == "clip":
        return m.clip_rate
    if metric == "range_use":
        return m.range_use
    raise ValueError(f"unknown metric {metric!r}; one of {', '.join(METRICS)}")


TABLE_KEYS = {"sqnr": "sqnr_db", "isolated": "sqnr_db", "worst_channel": "sqnr_db", "clip": "clip_rate",
              "range_use": "range_use"}  # a colouring mode's value is this metric of the metric table


def metric_text(v: float | None, metric: str) -> str:
    """A colouring mode's value as the metric table writes its metric ("31.23 dB", "0.1 %")."""
    return format_metric(v, TABLE_KEYS[metric])


def cause_fill(cause: str | None) -> str:
    return NO_DATA if cause is None else CAUSE_FILLS.get(cause, OTHER_CAUSE)
