"""Trade-off plot: model size against model-output SQNR, one labelled point per evaluated plan.

Series: the plans `suggest` (surgical edits of B, or the quantizer route) evaluated (the suggested one ringed), and the versions of the
requantize loop. Infinite SQNR (exact outputs) is drawn at `SQNR_EXACT_DB`. Numbers come from
core (`SuggestResult.points`, `requantize.delta.output_sqnr_db`); this module only draws them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from inspector.core.viewdata.layer_series import SQNR_EXACT_DB
from inspector.core.viewdata.suggest_view import suggest_view
from inspector.gui.views.plot_style import (
    COLOR_A,
    COLOR_B,
    COLOR_CLIP,
    brush,
    show_frame,
    style_plot,
    text_color,
)

ANCHORS = ((0.5, 1.25), (0.5, -0.25), (-0.08, 0.5), (1.08, 0.5))  # above, below, right, left


def axis_span(values: list[float], least: float) -> tuple[float, float] | None:
    """(lo, hi) to show for `values` when they (nearly) coincide: at least `least` wide around
    them; None when they spread enough for auto-range. All points equal (one plan, or Suggest
    trying plans of one size) made auto-range show a zero-width axis ('-1e-296' ticks)."""
    fin = [v for v in values if math.isfinite(v)]
    if not fin:
        return None
    lo, hi = min(fin), max(fin)
    if hi - lo >= least:
        return None
    mid = 0.5 * (lo + hi)
    return mid - least / 2, mid + least / 2


def x_least(xs: list[float]) -> float:
    """Narrowest size axis (KiB) worth showing: 2 % of the size, at least 1 KiB."""
    return max(0.02 * max((abs(x) for x in xs if math.isfinite(x)), default=0.0), 1.0)


Y_LEAST_DB = 2.0  # narrowest SQNR axis worth showing


def place_labels(entries: list[tuple[float, float, str]], width_px: float, height_px: float, extra_y: Sequence[float] = (),
                 char_px: float = 7.5, line_px: float = 17.0) -> list[tuple[float, float, str, tuple[float, float]]]:
    """Greedy: each label takes the first side of its point where it overlaps no earlier label;
    labels equal to one already placed at the same spot are dropped."""
    if not entries:
        return []
    xs, ys = [e[0] for e in entries], [e[1] for e in entries] + list(extra_y)
    # data units per pixel, with the view padding; coinciding points get the axis `axis_span` gives them
    sx = max(max(xs) - min(xs), x_least(xs)) * 1.3 / width_px
    sy = max(max(ys) - min(ys), Y_LEAST_DB) * 1.3 / height_px
    boxes: list[tuple[float, float, float, float]] = []
    out = []
    for x, y, text in entries:
        w, h = len(text) * char_px * sx, line_px * sy
        for ax, ay in ANCHORS:
            x0 = x - ax * w
            y0 = y + (ay - 1) * h  # pyqtgraph anchors y from the top of the text; the y axis points up
            box = (x0, y0, x0 + w, y0 + h)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in boxes):
                boxes.append(box)
                out.append((x, y, text, (ax, ay)))
                break
    return out


def suggestion_points(s) -> list[tuple[str, int, float | None]]:
    """(label, size bytes, SQNR dB) of the given model and every plan Suggest evaluated (either route)."""
    return [] if s is None else [(p.label, p.size_bytes, p.output_sqnr_db) for p in suggest_view(s).points]


def suggestion_best(s) -> tuple[int, float] | None:
    """(size bytes, SQNR dB) of the suggested model, or None."""
    best = None if s is None else suggest_view(s).best
    return None if best is None else (best.size_bytes, best.output_sqnr_db)


EMPTY_TEXT = "Run Suggest to see size against output SQNR for each plan it tries."


def _y(v: float | None) -> float:
    if v is None or math.isnan(v):
        return math.nan
    return SQNR_EXACT_DB if math.isinf(v) else float(v)


class TradeoffPlot(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        self.title.setWordWrap(True)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.plot = pg.PlotWidget()
        style_plot(self.plot)
        p = self.plot.getPlotItem()
        p.setLabel("bottom", "model size (KiB)")
        p.setLabel("left", "output SQNR (dB)")
        p.setMenuEnabled(False)
        p.getViewBox().setDefaultPadding(0.12)  # room for the point labels
        self.candidates = pg.ScatterPlotItem(symbol="o", size=10, pen=pg.mkPen(COLOR_B), brush=brush(COLOR_B, 170),
                                             hoverable=True, tip=self._tip)
        self.versions = pg.ScatterPlotItem(symbol="s", size=10, pen=pg.mkPen(COLOR_A), brush=brush(COLOR_A, 170),
                                           hoverable=True, tip=self._tip)
        self.best = pg.ScatterPlotItem(symbol="o", size=20, pen=pg.mkPen(COLOR_CLIP, width=2.5), brush=pg.mkBrush(None))
        self.target = pg.InfiniteLine(angle=0, pen=pg.mkPen(COLOR_CLIP, width=1, style=Qt.PenStyle.DashLine),
                                      label="target", labelOpts={"color": COLOR_CLIP, "position": 0.05})
        for item in (self.candidates, self.versions, self.best, self.target):
            p.addItem(item)
        self.target.hide()
        self.labels: list[pg.TextItem] = []
        self.empty = pg.TextItem(EMPTY_TEXT, color=text_color(), anchor=(0.5, 0.5))
        p.addItem(self.empty)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        self.suggestion = None
        self.measured_at: str | None = None
        self.version_points: list[tuple[str, int, float | None]] = []
        self.redraw()

    def set_suggestion(self, result, measured_at: str | None = None) -> None:
        """A `SuggestResult` / `SurgicalSuggestResult` (or None). `measured_at`: the tensor its
        SQNR was measured at when not the model output (the versions' output SQNR is then not
        drawn on the same axis)."""
        self.suggestion = result
        self.measured_at = measured_at
        at = f"SQNR at {measured_at} (dB)" if measured_at else "output SQNR (dB)"
        self.plot.getPlotItem().setLabel("left", at)
        self.redraw()

    def set_versions(self, points: list[tuple[str, int, float | None]]) -> None:
        """(name, size in bytes, output SQNR dB or None) per version of the loop."""
        shown = [p for p in points if p[2] is not None]
        if shown == self.version_points:
            return  # the same points (a result arriving updates the versions twice)
        self.version_points = shown
        self.redraw()

    def redraw(self) -> None:
        p = self.plot.getPlotItem()
        for t in self.labels:
            p.removeItem(t)
        self.labels = []
        s = self.suggestion
        pts = suggestion_points(s)
        versions = [] if self.measured_at else self.version_points
        xy = self._fill(self.candidates, pts) + self._fill(self.versions, versions)
        texts = [label for label, _, _ in pts] + [name.split(" ")[0] for name, _, _ in versions]
        extra_y: list[float] = [s.target_sqnr_db] if s is not None and s.target_sqnr_db is not None else []
        self._label([(x, y, t) for (x, y), t in zip(xy, texts, strict=True) if math.isfinite(y)], extra_y)

        self.best.setData([])
        self.target.hide()
        best = suggestion_best(s)
        if best is not None:
            self.best.setData([best[0] / 1024], [_y(best[1])])
        if s is not None and s.target_sqnr_db is not None:
            self.target.setValue(s.target_sqnr_db)
            self.target.show()
        empty = not pts and not versions
        self.empty.setVisible(empty)
        show_frame(p, not empty)  # no 0..1 axes around the hint
        if empty:
            self.empty.setPos(0.5, 0.5)
            p.setXRange(0, 1)
            p.setYRange(0, 1)
        else:
            p.enableAutoRange()
            xs = [x for x, _ in xy]
            span_x = axis_span(xs, x_least(xs))
            span_y = axis_span([y for _, y in xy] + extra_y, Y_LEAST_DB)
            if span_x is not None:
                p.setXRange(*span_x, padding=0.12)
            if span_y is not None:
                p.setYRange(*span_y, padding=0.12)
        self.title.setText(self._title())

    def resizeEvent(self, e) -> None:
        """Labels are placed in pixels: place them again for the new size (a plot filled while
        its tab was hidden had the default size, and its labels overlapped once shown)."""
        super().resizeEvent(e)
        if e.oldSize() != e.size() and (self.suggestion is not None or self.version_points):
            self.redraw()

    def _fill(self, item: pg.ScatterPlotItem, pts: list[tuple[str, int, float | None]]) -> list[tuple[float, float]]:
        if not pts:
            item.setData([])
            return []
        x = np.array([size / 1024 for _, size, _ in pts])
        y = np.array([_y(v) for _, _, v in pts])
        ok = np.isfinite(y)
        item.setData(x=x[ok], y=y[ok], data=[pts[i] for i in np.flatnonzero(ok)])
        return list(zip(x.tolist(), y.tolist(), strict=True))

    def _label(self, entries: list[tuple[float, float, str]], extra_y: list[float]) -> None:
        """Label points without overlapping (approximately, in plot pixels); a point whose label
        would cover another label is left to its tooltip."""
        font = QFont(self.font())
        font.setPointSizeF(max(6.0, font.pointSizeF() * 0.85))
        for x, y, text, anchor in place_labels(entries, max(self.plot.width(), 300), max(self.plot.height(), 200), extra_y):
            t = pg.TextItem(text, color=text_color(), anchor=anchor)
            t.setFont(font)
            t.setPos(x, y)
            self.plot.getPlotItem().addItem(t)
            self.labels.append(t)

    def _title(self) -> str:
        s = self.suggestion
        versions = "" if self.measured_at else f"<span style='color:{COLOR_A}'>■</span> versions of model B · "
        key = (f"<span style='color:{COLOR_B}'>●</span> plans Suggest tried · {versions}"
               f"<span style='color:{COLOR_CLIP}'>◯</span> suggested")
        if s is None:
            return f"Size against output SQNR. {key}" if self.version_points else ""
        v = suggest_view(s, self.measured_at)
        verdict = "met" if v.met else "not met"
        goal = f"target {v.target_db:.1f} dB" if v.target_db is not None else f"{len(v.steps)} step(s)"
        chosen = "; ".join(f"{st.edit} on {st.ops}" for st in v.steps) or "no edit"
        what = "surgical edits of B" if v.route == "surgical" else f"{s.treatment}, base {s.base}"
        return (f"Suggest ({what}, {goal}): <b>{verdict}</b> with {chosen}; "
                f"{len(v.points) - 1} models evaluated.<br>{key}")

    def _tip(self, x, y, data) -> str:
        label, size, v = data
        sq = "∞ (exact)" if v is not None and math.isinf(v) else f"{v:.2f} dB"
        return f"{label}\n{size / 1024:,.1f} KiB · output SQNR {sq}"

    def point_data(self, which: str = "candidates") -> tuple[np.ndarray, np.ndarray]:
        x, y = getattr(self, which).getData()
        return np.asarray(x), np.asarray(y)
