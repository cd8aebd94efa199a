"""How a number is written in text: the one set of formatters every view, report and message uses
(a metric's own format is `stats.metric_table`, which builds on the same conventions).

- `number(v, digits)`: `digits` significant digits ("0.0123", "1.23e+04"), or `decimals`;
- `db(v)`: decibels with fixed decimals ("31.2", "31.20 dB" with `unit`);
- `percent(v)`: a share in [0, 1] as a percentage ("12.5 %");
- `signed(v, decimals)`: with its sign, never "-0.00"; `signed_db(v)` a gain in dB ("+18.6", "-").

Missing values (None, and NaN where a figure could not be measured) are written `none`; infinite
ones "inf" / "-inf" (plain text, the command line) or "∞" / "−∞" (`symbols=True`, the window).
"""

from __future__ import annotations

import math

INF_TEXT = ("inf", "-inf")
INF_SYMBOLS = ("∞", "−∞")


def _infinite(v: float, symbols: bool) -> str:
    pos, neg = INF_SYMBOLS if symbols else INF_TEXT
    return pos if v > 0 else neg


def number(v: float | None, digits: int = 6, *, decimals: int | None = None, none: str = "—", unit: str = "",
           symbols: bool = False) -> str:
    """`v` with `digits` significant digits (or `decimals` fixed ones) and `unit` appended as given."""
    if v is None:
        return none
    if math.isinf(v):
        return _infinite(v, symbols) + unit
    return (f"{v:.{decimals}f}" if decimals is not None else f"{v:.{digits}g}") + unit


def db(v: float | None, decimals: int = 1, *, unit: bool = False, none: str = "n/a", symbols: bool = False) -> str:
    """A decibel figure (SQNR, a gain): "31.2", with `unit` "31.2 dB"; NaN is `none`."""
    if v is None or math.isnan(v):
        return none
    return number(v, decimals=decimals, unit=" dB" if unit else "", symbols=symbols)


def percent(v: float | None, decimals: int = 1, *, none: str = "n/a", space: bool = True) -> str:
    """A share in [0, 1] as a percentage: "12.5 %" ("12.5%" without `space`)."""
    if v is None:
        return none
    return f"{100 * v:.{decimals}f}" + (" %" if space else "%")


def signed(v: float, decimals: int) -> str:
    """'+0.00', never '-0.00': a change that rounds to zero has no sign."""
    return f"{round(v, decimals) + 0.0:+.{decimals}f}"


def signed_db(v: float | None, decimals: int = 1, *, none: str = "-") -> str:
    """A change in decibels with its sign ("+18.6", "-0.3", "+inf"); None is `none`."""
    if v is None:
        return none
    return "+inf" if v == math.inf else signed(v, decimals)
