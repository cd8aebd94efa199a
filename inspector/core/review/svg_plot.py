"""Small inline-SVG plots for self-contained HTML reports (no Qt, no network, no JS).

`line_plot` draws series of (x, y) points with gaps where y is None; `step_histogram` draws
histograms as outlined steps over shared bin edges, optionally with a log count axis and
vertical markers (e.g. the representable range). Text is escaped; output is a string.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from html import escape

from inspector.core.text.numbers import number

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e")


@dataclass(frozen=True)
class Series:
    label: str
    xs: Sequence[float]
    ys: Sequence[float | None]
    color: str = PALETTE[0]
    dashed: bool = False


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return []
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.ceil(lo / step - 1e-9) * step
    out, v = [], start
    while v <= hi + step * 1e-9:
        out.append(0.0 if abs(v) < step * 1e-9 else v)
        v += step
    return out


class _Frame:
    """Maps data to pixels inside margins; draws axes, ticks and labels."""

    def __init__(self, width: int, height: int, x_range: tuple[float, float], y_range: tuple[float, float],
                 log_y: bool = False, margin: tuple[int, int, int, int] = (56, 16, 30, 44)) -> None:
        self.w, self.h = width, height
        self.ml, self.mr, self.mt, self.mb = margin
        self.x0, self.x1 = x_range
        self.log_y = log_y
        y0, y1 = y_range
        if log_y:
            y0, y1 = math.log10(max(y0, 1e-300)), math.log10(max(y1, 1e-300))
        if y1 <= y0:
            y0, y1 = y0 - 1, y1 + 1
        if self.x1 <= self.x0:
            self.x0, self.x1 = self.x0 - 0.5, self.x1 + 0.5
        self.y0, self.y1 = y0, y1

    def px(self, x: float) -> float:
        return self.ml + (x - self.x0) / (self.x1 - self.x0) * (self.w - self.ml - self.mr)

    def py(self, y: float) -> float:
        v = math.log10(max(y, 1e-300)) if self.log_y else y
        return self.mt + (self.y1 - v) / (self.y1 - self.y0) * (self.h - self.mt - self.mb)

    def axes(self, x_label: str, y_label: str, x_ticks: Iterable[float] | None = None,
             y_ticks: Iterable[tuple[float, str]] | None = None) -> list[str]:
        """`y_ticks`: (value, label) pairs instead of round numbers (e.g. the SQNR "∞ / ≥ 100" line)."""
        left, right, top, bottom = self.ml, self.w - self.mr, self.mt, self.h - self.mb
        parts = [f'<rect x="{left}" y="{top}" width="{right - left}" height="{bottom - top}" fill="none" stroke="#999"/>']
        if y_ticks is not None:
            yt = list(y_ticks)
        elif self.log_y:
            yt = [(10.0**k, f"1e{k}") for k in range(math.ceil(self.y0), math.floor(self.y1) + 1)]
        else:
            yt = [(t, number(t, 4)) for t in nice_ticks(self.y0, self.y1)]
        for t, label in yt:
            y = self.py(t)
            parts.append(f'<line x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" stroke="#e5e5e5"/>')
            parts.append(f'<text x="{left - 4}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')
        for t in x_ticks if x_ticks is not None else nice_ticks(self.x0, self.x1, 6):
            x = self.px(t)
            parts.append(f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="#999"/>')
            parts.append(f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{number(t, 4)}</text>')
        parts.append(f'<text x="{(left + right) / 2:.1f}" y="{self.h - 6}" text-anchor="middle">{escape(x_label)}</text>')
        parts.append(f'<text transform="translate(14,{(top + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle">{escape(y_label)}</text>')
        return parts


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'font-family="sans-serif" font-size="11" role="img"><title>{escape(title)}</title>'
            + "".join(body) + "</svg>")  # fmt: skip


def _legend(frame: _Frame, items: list[tuple[str, str, bool]]) -> list[str]:
    """One row above the plot area (in the top margin), so it never covers data."""
    parts, x, y = [], frame.ml, frame.mt - 12
    for label, color, dashed in items:
        dash = ' stroke-dasharray="5,3"' if dashed else ""
        parts.append(f'<line x1="{x}" y1="{y}" x2="{x + 18}" y2="{y}" stroke="{color}" stroke-width="2"{dash}/>')
        parts.append(f'<text x="{x + 22}" y="{y + 4}">{escape(label)}</text>')
        x += 30 + 7 * len(label)
    return parts


def integer_ticks(lo: float, hi: float, n: int = 6) -> list[float]:
    """Round ticks on whole numbers only (op indices: no tick at 1.5)."""
    return [t for t in nice_ticks(lo, hi, n) if float(t).is_integer()] or [float(round(lo))]


def line_plot(series: Sequence[Series], *, title: str, x_label: str, y_label: str, width: int = 900,
              height: int = 300, log_y: bool = False, highlight: Sequence[float] = (),
              connect_gaps: bool = False, integer_x: bool = False,
              y_axis: Callable[[float, float], list[tuple[float, str]]] | None = None,
              y_line: tuple[float, str] | None = None) -> str:  # fmt: skip
    """Lines with markers; None (or non-finite) y values break the line unless `connect_gaps`.
    `highlight`: x values whose first-series point gets a ring; `integer_x`: ticks on whole
    numbers; `y_axis(lo, hi)`: the y ticks as (value, label); `y_line`: a dotted horizontal
    line (value, tooltip) such as the stand-in line of equal tensors."""
    pts = [(x, y) for s in series for x, y in zip(s.xs, s.ys, strict=False) if y is not None and math.isfinite(y)]
    if log_y:
        pts = [(x, y) for x, y in pts if y > 0]
    if not pts:
        return _svg(width, 60, title, [f'<text x="10" y="30">{escape(title)}: no finite values to plot</text>'])
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    pad = 0.05 * (max(ys) - min(ys) or 1.0)
    yr = (min(ys), max(ys)) if log_y else (min(ys) - pad, max(ys) + pad)
    f = _Frame(width, height, (min(xs), max(xs)), yr, log_y)
    body = f.axes(x_label, y_label, x_ticks=integer_ticks(f.x0, f.x1) if integer_x else None,
                  y_ticks=y_axis(f.y0, f.y1) if y_axis else None)  # fmt: skip
    if y_line is not None:
        yl = f.py(y_line[0])
        body.append(f'<line x1="{f.ml}" y1="{yl:.1f}" x2="{f.w - f.mr}" y2="{yl:.1f}" stroke="#555" '
                    f'stroke-dasharray="2,3"><title>{escape(y_line[1])}</title></line>')  # fmt: skip
    for s in series:
        segs: list[list[tuple[float, float]]] = [[]]
        for x, y in zip(s.xs, s.ys, strict=False):
            if y is None or not math.isfinite(y) or (log_y and y <= 0):
                if not connect_gaps:
                    segs.append([])
            else:
                segs[-1].append((f.px(x), f.py(y)))
        dash = ' stroke-dasharray="5,3"' if s.dashed else ""
        for seg in segs:
            if len(seg) > 1:
                d = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg)
                body.append(f'<polyline points="{d}" fill="none" stroke="{s.color}" stroke-width="1.6"{dash}/>')
            for x, y in seg:
                body.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="2.6" fill="{s.color}"/>')
    for hx in highlight:
        for s in series[:1]:
            for x, y in zip(s.xs, s.ys, strict=False):
                if x == hx and y is not None and math.isfinite(y):
                    body.append(f'<circle cx="{f.px(x):.1f}" cy="{f.py(y):.1f}" r="6" fill="none" stroke="#d62728" stroke-width="1.5"/>')
    body += _legend(f, [(s.label, s.color, s.dashed) for s in series])
    return _svg(width, height, title, body)


def step_histogram(edges: Sequence[float], series: Sequence[tuple[str, Sequence[float], str]], *, title: str,
                   x_label: str, width: int = 420, height: int = 220, log_y: bool = True,
                   markers: Sequence[tuple[float, str]] = ()) -> str:  # fmt: skip
    """Outlined step histograms over shared `edges`; `markers`: (x, label) dashed vertical lines."""
    if len(edges) < 2 or not series:
        return _svg(width, 60, title, [f'<text x="10" y="30">{escape(title)}: no data</text>'])
    tops = [c for _, counts, _ in series for c in counts if c > 0]
    if not tops:
        return _svg(width, 60, title, [f'<text x="10" y="30">{escape(title)}: empty</text>'])
    lo_y = 0.8 if log_y else 0.0
    f = _Frame(width, height, (edges[0], edges[-1]), (lo_y, max(tops) * (1.5 if log_y else 1.05)), log_y)
    body = f.axes(x_label, "count")
    base = f.py(lo_y)
    for _label, counts, color in series:
        d = [f"M{f.px(edges[0]):.1f},{base:.1f}"]
        for i, c in enumerate(counts):
            y = f.py(c) if c > 0 else base
            d.append(f"L{f.px(edges[i]):.1f},{y:.1f} L{f.px(edges[i + 1]):.1f},{y:.1f}")
        d.append(f"L{f.px(edges[-1]):.1f},{base:.1f}")
        body.append(f'<path d="{" ".join(d)}" fill="{color}" fill-opacity="0.12" stroke="{color}" stroke-width="1.2"/>')
    mid = 0.5 * (edges[0] + edges[-1])
    for x, label in markers:
        if edges[0] <= x <= edges[-1]:
            left = x > mid  # label on the inner side of the line, so it stays inside the plot
            tx, anchor = (f.px(x) - 3, "end") if left else (f.px(x) + 3, "start")
            body.append(f'<line x1="{f.px(x):.1f}" y1="{f.mt}" x2="{f.px(x):.1f}" y2="{base:.1f}" stroke="#555" stroke-dasharray="3,3"/>')
            body.append(f'<text x="{tx:.1f}" y="{f.mt + 12}" text-anchor="{anchor}" fill="#555">{escape(label)}</text>')
    body += _legend(f, [(label, color, False) for label, _, color in series])
    return _svg(width, height, title, body)
