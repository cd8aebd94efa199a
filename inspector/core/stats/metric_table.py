"""How each metric of `Metrics` is presented: one row per metric, read by every presenter.

The GUI (layer plot's metric chooser, axis labels, tooltips, value cells), the CLI table
(`compare.export.text_table`), the HTML report's tables and the Model Explorer export take the
metric's label, unit, number format, direction and percent-ness from here, and the CSV/JSON keys
are `METRIC_KEYS`. A new per-layer metric is its definition in `stats.metrics` (a `Metrics`
field, `METRIC_KEYS`, its sums) and one row here; nothing else.

The order of `METRIC_TABLE` is the order presenters list metrics in (the plot's chooser, the
report's columns, the CLI's columns); `METRIC_KEYS` keeps the contract order of the CSV columns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    """The metric's column in the fixed-width CLI table."""

    head: str  # "SQNR dB"
    width: int
    spec: str  # format of a cell, e.g. ".2f"


@dataclass(frozen=True)
class MetricSpec:
    key: str  # the `Metrics` field and JSON/CSV key
    label: str  # its name in prose, plot axes, tooltips and column headers: "max |error|"
    unit: str = ""  # what it is measured in ("dB", "float units²", "steps"); "" for a ratio
    digits: int = 4  # significant digits shown (percent: one fewer)
    fixed: bool = False  # `digits` decimals instead of significant digits (cosine: all near 1)
    higher_is_better: bool = False
    percent: bool = False  # a share in [0, 1], shown in %
    log: bool = False  # spans decades: drawn on a log axis
    unit_on_values: bool = False  # values are written with the unit ("12.3 dB")
    plot: bool = True  # offered by the layer plot's chooser
    report: bool = True  # a column of the report's worst-layers table
    column: Column | None = None  # its column in the CLI table (None: not there)
    brief: str = ""  # compact format in one-line CLI summaries (default: the column's)

    @property
    def header(self) -> str:
        """Column header or axis label with the unit: "SQNR (dB)", "clip rate (%)"."""
        unit = "%" if self.percent else self.unit
        return f"{self.label} ({unit})" if unit else self.label

    def number(self, v: float) -> str:
        """A finite value as presenters show it, without a unit ("1.23e-05", "4.2 %")."""
        if self.percent:
            return f"{100 * v:.{self.digits - 1}g} %"
        return f"{v:.{self.digits}f}" if self.fixed else f"{v:.{self.digits}g}"

    def text(self, v: float | None) -> str:
        """A value with its unit where values carry one: "n/a", "∞", "31.2 dB", "0.998731"."""
        if v is None:
            return "n/a"
        if math.isinf(v):
            return "∞" if v > 0 else "−∞"
        return self.number(v) + (f" {self.unit}" if self.unit_on_values and self.unit else "")

    def brief_text(self, v: float | None) -> str:
        """A value in a compact CLI summary ("-" when missing, "inf" for ∞)."""
        if v is None:
            return "-"
        if isinstance(v, float) and math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return format(v, self.brief or (self.column.spec if self.column else f".{self.digits}g"))


METRIC_TABLE: tuple[MetricSpec, ...] = (
    MetricSpec("sqnr_db", "SQNR", "dB", higher_is_better=True, unit_on_values=True,
               column=Column("SQNR dB", 8, ".2f")),
    MetricSpec("mse", "MSE", "float units²", log=True, column=Column("MSE", 10, ".3g")),
    MetricSpec("max_abs", "max |error|", "float units", log=True, brief=".3g"),
    MetricSpec("mean_error", "mean error / bias", "float units", plot=False),
    MetricSpec("rmse_over_scale", "RMSE / scale", "steps", column=Column("RMSE/S", 7, ".2f")),
    MetricSpec("clip_rate", "clip rate", percent=True, column=Column("clip%", 6, ".2f")),
    MetricSpec("range_use", "range use", percent=True, higher_is_better=True),
    MetricSpec("cosine", "cosine similarity", digits=6, fixed=True, higher_is_better=True, report=False,
               column=Column("cos", 7, ".4f"), brief=".5f"),
)


def metric_specs() -> tuple[MetricSpec, ...]:
    """The table, read when called (presenters never keep a copy of it)."""
    return METRIC_TABLE


def spec(key: str) -> MetricSpec:
    """The presentation of metric `key` (KeyError for an unknown key)."""
    for m in METRIC_TABLE:
        if m.key == key:
            return m
    raise KeyError(key)


def format_metric(v: float | None, key: str) -> str:
    """`v` of metric `key` with its unit where values carry one (`MetricSpec.text`)."""
    return spec(key).text(v)
