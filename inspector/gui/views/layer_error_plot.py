"""Layer error plot: one point per layer against B's op index (the layer identifier of the op
tables, reports and `compare --json`), for a selectable metric.

Series: accumulated (end to end) and isolated error of the current comparison, a baseline
(e.g. before a requantization) and one re-run sample ("sample #k"). Baseline points sit at the
x of the current layer with the same float tensor, so both runs line up layer by layer.
Clicking a point emits `layer_clicked(op index of B)`, the one layer identity of the GUI (as the
parity plot); `set_selected(op index of B)` rings that layer. ∞ and ≥ 100 dB are drawn on one
line whose axis tick reads "∞ / ≥ 100" (`core.stats.sqnr_scale`); integer shape ops are not on
the curve (`is_shape_only`).
Values come from `core.layer_series`; this module only draws them.

Real models have 1,500 layers: above BIG_LAYERS the plot is an overview and a detail. The
overview (below) draws every layer's curve decimated to the pixels it has (min and max per
pixel, no antialiasing) with the worst layers marked and a range selector (`LinearRegionItem`);
the detail draws the points of the layers in its range only (O(visible) per pan or click, no
antialiasing), follows the selector both ways and moves to a selected layer out of its range.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget
from shiboken6 import isValid

from inspector.core.compare.result import ComparisonResult
from inspector.core.stats.ranking import worst_first
from inspector.core.stats.sqnr_scale import EXACT_LINE_LABEL, exact_axis_ticks
from inspector.core.viewdata.layer_series import (
    EXACT_NOTE,
    SQNR_KEYS,
    LayerSeries,
    aligned_x,
    exact_sqnr_position,
    layer_series,
    layer_tooltip,
    metric_spec,
    plot_metrics,
)
from inspector.gui.turns import later
from inspector.gui.views.plot_style import (
    COLOR_B,
    COLOR_CLIP,
    COLOR_SECOND,
    brush,
    show_frame,
    style_plot,
    text_color,
)

COLOR_BASELINE = "#8c8c8c"
MARKS = {"o": "●", "s": "■", "t": "▼", "d": "◆"}
COLOR_SAMPLE = "#9467bd"
EMPTY_TEXT = "Run a comparison (Ctrl+R) to plot every layer's error."
BIG_LAYERS = 300  # more layers: overview + detail, no antialiasing
DETAIL_SPAN = 100  # layers the detail shows when a large result arrives
POINTS_MAX = 600  # the detail draws its points (clickable) up to this many; more: the curve only
WORST_MARKS = 10  # the worst layers marked (by the metric's own value)
COLOR_WORST = "#d62728"


class LayerErrorPlot(QWidget):
    layer_clicked = Signal(int)  # op index of B (`LayerResult.op_index`)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: ComparisonResult | None = None
        self.baseline: ComparisonResult | None = None
        self.baseline_label = ""
        self.sample: ComparisonResult | None = None
        self.sample_label = ""
        self.selected: int | None = None
        self.series: dict[str, LayerSeries] = {}
        self.legend_labels: list[str] = []  # series shown, in drawing order
        self.metric_combo = QComboBox()
        for m in plot_metrics():  # labels from the one metric table (`core.stats.metric_table`)
            self.metric_combo.addItem(m.label + (" (log)" if m.log else ""), m.key)
        self.metric_combo.currentIndexChanged.connect(lambda _i: self.redraw())
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Metric:"))
        bar.addWidget(self.metric_combo)
        self.legend = QLabel()  # outside the plot: never covers a point
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        bar.addWidget(self.legend, 1)
        self.title.setWordWrap(True)
        for label in (self.title, self.legend):  # long texts wrap instead of widening the window
            label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        self.plot = pg.PlotWidget()
        style_plot(self.plot)
        p = self.plot.getPlotItem()
        p.setLabel("bottom", "layer (execution order of model B)")
        p.setMenuEnabled(False)
        self.curves: dict[str, pg.PlotCurveItem] = {}
        self.points: dict[str, pg.ScatterPlotItem] = {}
        self.styles = styles = {
            "baseline": (COLOR_BASELINE, Qt.PenStyle.DashLine, "t"),
            "accumulated": (COLOR_B, Qt.PenStyle.SolidLine, "o"),
            "isolated": (COLOR_SECOND, Qt.PenStyle.SolidLine, "s"),
            "sample": (COLOR_SAMPLE, Qt.PenStyle.DotLine, "d"),
        }
        for z, (name, (color, style, symbol)) in enumerate(styles.items()):
            curve = pg.PlotCurveItem(pen=pg.mkPen(color, width=1.5, style=style), connect="finite")
            pts = pg.ScatterPlotItem(symbol=symbol, size=8, pen=pg.mkPen(color), brush=brush(color, 200),
                                     hoverable=True, hoverSize=12, tip=self._tip)
            pts.sigClicked.connect(self._points_clicked)
            curve.setZValue(z)
            pts.setZValue(z + 0.5)
            p.addItem(curve)
            p.addItem(pts)
            self.curves[name], self.points[name] = curve, pts
        self.ring = pg.ScatterPlotItem(symbol="o", size=18, pen=pg.mkPen(COLOR_CLIP, width=2.5), brush=pg.mkBrush(None))
        self.ring.setZValue(20)
        self.depth_cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen(COLOR_CLIP, width=1, style=Qt.PenStyle.DotLine))
        self.depth_cursor.hide()
        self.exact_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(text_color(), width=1, style=Qt.PenStyle.DotLine),
                                          label=EXACT_LINE_LABEL, labelOpts={"position": 0.03, "color": text_color(), "anchors": [(0, 1), (0, 1)]})
        self.exact_line.hide()
        p.addItem(self.exact_line)
        p.addItem(self.ring, ignoreBounds=True)  # a marker never stretches the axes
        p.addItem(self.depth_cursor, ignoreBounds=True)
        self.empty = pg.TextItem(EMPTY_TEXT, color=text_color(), anchor=(0.5, 0.5))
        p.addItem(self.empty)
        self._y_extent: tuple[float, float] | None = None
        p.getViewBox().sigResized.connect(self._headroom)
        self.worst_marks = pg.ScatterPlotItem(symbol="t", size=11, pen=pg.mkPen(COLOR_WORST, width=1.5), brush=pg.mkBrush(None))
        self.worst_marks.setZValue(15)
        self.worst_marks.opts.update(hoverable=True, tip=self._tip)
        self.worst_marks.sigClicked.connect(self._points_clicked)
        p.addItem(self.worst_marks, ignoreBounds=True)
        self._full: dict[str, dict] = {}  # per series: every drawn point (x, y, layer position) and curve
        self.worst_layers: list[int] = []  # positions in result.layers, worst first (the marks)
        self.big = False
        self._syncing = False
        self._build_overview()
        p.getViewBox().sigXRangeChanged.connect(self._detail_moved)
        p.scene().sigMouseClicked.connect(self._scene_clicked)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        lay.addWidget(self.overview)
        self.redraw()
        from inspector.gui.first_figure import watch

        watch(self.plot.viewport(), lambda: self.result is not None and not self._stale)  # benchmarks' marker

    def _build_overview(self) -> None:
        """The whole model in a strip below the detail: decimated curves, the worst layers marked,
        and the range the detail shows (drag it, or click where to look)."""
        self.overview = pg.PlotWidget()
        style_plot(self.overview)
        o = self.overview.getPlotItem()
        o.setMenuEnabled(False)
        o.hideButtons()
        o.setMouseEnabled(x=False, y=False)
        o.hideAxis("left")
        o.setClipToView(True)
        o.setDownsampling(auto=True, mode="peak")  # min and max per pixel: a spike is never lost
        self.overview.setFixedHeight(max(70, 5 * self.fontMetrics().height()))
        self.overview.setToolTip("Every layer; the band is the range shown above: drag it or its edges, or click where to look. "
                                 "▼ the worst layers")  # fmt: skip
        self.overview_curves: dict[str, pg.PlotDataItem] = {}
        for name in ("accumulated", "isolated"):
            color = self.styles[name][0]
            c = pg.PlotDataItem(pen=pg.mkPen(color, width=1), antialias=False, connect="finite")
            o.addItem(c)
            self.overview_curves[name] = c
        self.overview_marks = pg.ScatterPlotItem(symbol="t", size=8, pen=pg.mkPen(COLOR_WORST), brush=pg.mkBrush(COLOR_WORST))
        o.addItem(self.overview_marks)
        self.region = pg.LinearRegionItem(brush=brush(COLOR_B, 40))
        self.region.setZValue(10)
        o.addItem(self.region, ignoreBounds=True)
        self.region.sigRegionChanged.connect(self._region_moved)
        self.overview.scene().sigMouseClicked.connect(self._overview_clicked)
        self.overview.hide()

    # ------------------------------------------------------------------ inputs
    @property
    def metric_key(self) -> str:
        return self.metric_combo.currentData()

    def set_metric(self, key: str) -> None:
        self.metric_combo.setCurrentIndex(self.metric_combo.findData(key))

    def set_result(self, result: ComparisonResult | None) -> None:
        self.result = result
        self.redraw()

    def set_baseline(self, result: ComparisonResult | None, label: str = "baseline") -> None:
        if result is None and self.baseline is None:
            return  # nothing changes (a 1,500-layer redraw saved)
        self.baseline, self.baseline_label = result, label
        self.redraw()

    def set_sample(self, result: ComparisonResult | None, label: str = "") -> None:
        if result is None and self.sample is None:
            return
        self.sample, self.sample_label = result, label
        self.redraw()

    def set_selected(self, op_index: int | None) -> None:
        """Ring the layer of B's op `op_index` (None: no selection)."""
        self.selected = op_index
        self._draw_ring()
        if self.big and self.result is not None:
            i = self.layer_position(op_index)
            x0, x1 = self.plot.getPlotItem().getViewBox().viewRange()[0]
            if i is not None and not x0 <= self.result.layers[i].op_index <= x1:
                self._place_window(float(self.result.layers[i].op_index))

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
        """Draw the runs; a large result (BIG_LAYERS) on a plot out of sight (another tab) is
        drawn when the plot is shown (`showEvent`): three plots redrawn at once cost 50 ms."""
        big = sum(len(run.layers) for run in (self.result, self.baseline, self.sample) if run is not None) > BIG_LAYERS
        if big and not self.isVisible():
            self._stale = True
            return
        if big:  # one redraw for the result, baseline and sample that change together, after the event
            self._stale = True  # in a turn of its own (`turns.later`): input, paints, timers come in between
            later(self, "draw", self.ensure_drawn)
            return
        self._stale = False
        self._redraw()

    _stale = False

    def showEvent(self, e) -> None:  # noqa: N802
        super().showEvent(e)
        if self._stale:  # what was deferred while out of sight, once the page is up (never within the click)
            later(self, "draw", self.ensure_drawn)

    def ensure_drawn(self) -> None:
        """Draw now what a hidden plot deferred (tests and screenshots read the drawing)."""
        if self._stale and isValid(self):
            self._stale = False
            self._redraw()

    def _redraw(self) -> None:
        key = self.metric_key
        choice = metric_spec(key)
        p = self.plot.getPlotItem()
        legend: list[tuple[str, str]] = []
        self.series = {}
        r = self.result
        runs: list[tuple[str, ComparisonResult | None, bool, str]] = [
            ("baseline", self.baseline, False, self.baseline_label or "baseline"),
            ("accumulated", r, False, "accumulated (end to end)"),
            ("isolated", r if r is not None and r.isolated else None, True, "isolated (own error)"),
            ("sample", self.sample, False, self.sample_label or "one sample"),
        ]
        p.setLogMode(y=choice.log)
        p.setLabel("bottom", "op index in model B (quantized)")
        n = max((layer.op_index for run in (r, self.baseline, self.sample) if run is not None for layer in run.layers), default=0) + 1
        self._tick_spacing(n)
        top = exact_sqnr_position(self.baseline, r, self.sample)
        shown_y: list[float] = []
        self._full = {}
        for name, res, iso, label in runs:
            curve, pts = self.curves[name], self.points[name]
            s = layer_series(res, key, isolated=iso, name=label, exact_at=top) if res is not None else None
            if s is None or not len(s.values):
                curve.setData([], [])
                pts.setData([])
                continue
            x = s.depth.copy()
            if name in ("baseline", "sample") and r is not None and res is not None:
                x = aligned_x(res, r)
                order = np.argsort(x, kind="stable")
            else:
                order = np.arange(len(x))
            self.series[name] = s
            y = s.values
            plot_y = np.log10(np.where(y > 0, y, np.nan)) if choice.log else y
            ok = np.isfinite(plot_y) & s.drawn()
            shown_y.extend(plot_y[ok].tolist())
            on_curve = order[~np.asarray(s.shape_only, bool)[order]] if s.shape_only else order
            at = np.flatnonzero(ok)
            by_x = np.argsort(x[at], kind="stable")  # points in x order: the detail slices them by its range
            self._full[name] = {"x": x[at][by_x], "y": plot_y[at][by_x], "i": at[by_x], "res": res,
                                "cx": x[on_curve], "cy": plot_y[on_curve]}
            color, _style, symbol = self.styles[name]
            legend.append((label, f"<span style='white-space:nowrap'><span style='color:{color}'>{MARKS[symbol]}</span>&nbsp;"
                                  f"{html.escape(label)}</span>"))  # an entry never wraps inside itself
        n_layers = len(r.layers) if r is not None else 0
        self.big = n_layers > BIG_LAYERS
        self._rank_worst(key)
        if self.worst_layers:
            legend.append(("worst", f"<span style='white-space:nowrap'><span style='color:{COLOR_WORST}'>▽</span>&nbsp;"
                                    f"{len(self.worst_layers)} worst ({html.escape(self._worst_basis)})</span>"))
        self.legend_labels = [lab for lab, _ in legend]
        self.legend.setText("&nbsp;&nbsp;&nbsp; ".join(h for _, h in legend))  # breaks only between entries
        has_inf = any(n == EXACT_NOTE or "∞ line" in n for s in self.series.values() for n in s.notes)
        self.exact_line.setVisible(key in SQNR_KEYS and has_inf)
        self.exact_line.setValue(top)
        p.setLabel("left", choice.header)  # "SQNR (dB)", "clip rate (%)", as the report's column
        left = p.getAxis("left")
        left.setScale(100.0 if choice.percent else 1.0)  # shares are drawn as fractions, ticks read in %
        if self.exact_line.isVisible() and shown_y:
            left.setTicks([exact_axis_ticks(min(shown_y), top), []])
        else:
            left.setTicks(None)
        self.empty.setVisible(r is None and self.baseline is None)
        show_frame(p, not self.empty.isVisible())  # no 0..1 axes around the hint
        self.overview.setVisible(self.big and not self.empty.isVisible())
        if self.empty.isVisible():
            self.empty.setPos(0.5, 0.5)
            p.setXRange(0, 1)
            p.setYRange(0, 1)
            self._fill_window()
        elif self.big:
            self._show_overview()
            lo_y, hi_y = (min(shown_y), max(shown_y)) if shown_y else (0.0, 1.0)
            p.enableAutoRange(x=False, y=False)
            self._y_extent = (lo_y, max(hi_y, top) if self.exact_line.isVisible() else hi_y)
            self._syncing = True  # one fill below, not one per range signal
            try:
                self._place_window(self._window_centre())
                self._headroom()
                self.region.setRegion(self.plot.getPlotItem().getViewBox().viewRange()[0])
            finally:
                self._syncing = False
            self._fill_window()
        else:
            self._fill_window()
            self._draw_ring()  # at the new metric's height before the axes fit the data
            p.enableAutoRange()
            self._y_extent = (min(shown_y), max(max(shown_y), top)) if self.exact_line.isVisible() and shown_y else None
            self._headroom()
        self._draw_ring()
        self._set_title()

    # ------------------------------------------------------------------ large results: overview + detail
    def _rank_worst(self, key: str) -> None:
        """The WORST_MARKS worst layers by the metric's own value: of each layer's own (isolated)
        error when the run has it (the accumulated curve's worst are simply its deepest layers),
        else of the accumulated error."""
        self.worst_layers, self._worst_basis = [], ""
        s = self.series.get("isolated") or self.series.get("accumulated")
        if s is None or self.result is None or len(self.result.layers) <= 20:
            self.worst_marks.setData([])
            self.overview_marks.setData([])
            return
        drawn = s.drawn()
        vals = [v if drawn[k] else None for k, v in enumerate(s.raw)]
        order = worst_first(vals, higher_is_better=metric_spec(key).higher_is_better)
        self.worst_layers = order[:WORST_MARKS]
        self._worst_basis = "own error" if s is self.series.get("isolated") else "accumulated"
        full = self._full["isolated" if s is self.series.get("isolated") else "accumulated"]
        at = {int(i): k for k, i in enumerate(full["i"])}
        pos = [at[i] for i in self.worst_layers if i in at]
        xs, ys = full["x"][pos], full["y"][pos]
        self.worst_marks.setData(x=xs, y=ys, data=[("worst", i, self.result) for i in self.worst_layers if i in at])
        self.overview_marks.setData(x=xs, y=ys)

    def _show_overview(self) -> None:
        for name, c in self.overview_curves.items():
            f = self._full.get(name)
            c.setData(f["cx"], f["cy"]) if f is not None else c.setData([], [])
        xs = self._full["accumulated"]["x"] if "accumulated" in self._full else np.array([0.0, 1.0])
        lo, hi = (float(xs.min()), float(xs.max())) if xs.size else (0.0, 1.0)
        self.region.setBounds((lo - 1, hi + 1))
        o = self.overview.getPlotItem()
        o.setXRange(lo - 1, hi + 1, padding=0)
        ys = np.concatenate([f["cy"][np.isfinite(f["cy"])] for f in self._full.values()] or [np.zeros(1)])
        y0, y1 = (float(ys.min()), float(ys.max())) if ys.size else (0.0, 1.0)
        o.setYRange(y0, y1 if y1 > y0 else y0 + 1.0, padding=0.08)  # set once: no auto range over every point per paint

    def _window_centre(self) -> float:
        """Where the detail looks when a result arrives: the selected layer, else the worst."""
        r = self.result
        i = self.layer_position(self.selected)
        if i is None and self.worst_layers:
            i = self.worst_layers[0]
        if r is None or i is None:
            return DETAIL_SPAN / 2
        return float(r.layers[i].op_index)

    def _place_window(self, centre: float, span: float | None = None) -> None:
        x0, x1 = self.plot.getPlotItem().getViewBox().viewRange()[0]
        span = span if span is not None else (x1 - x0 if self._window_set else DETAIL_SPAN)
        self._window_set = True
        self.plot.getPlotItem().setXRange(centre - span / 2, centre + span / 2, padding=0)

    _window_set = False

    def _detail_moved(self, *_args) -> None:
        if self._syncing:
            return
        self._syncing = True
        try:
            if self.big:
                x0, x1 = self.plot.getPlotItem().getViewBox().viewRange()[0]
                self.region.setRegion((x0, x1))
                if (x0, x1) == self._filled_range:
                    return  # the same layers (a layout's range signal): drawn already
            self._fill_window()
        finally:
            self._syncing = False

    _filled_range: tuple[float, float] | None = None  # the detail's x range its points were last filled for

    def _region_moved(self) -> None:
        if self._syncing or not self.big:
            return
        self._syncing = True
        try:
            x0, x1 = self.region.getRegion()
            self.plot.getPlotItem().setXRange(x0, x1, padding=0)
            self._fill_window()
        finally:
            self._syncing = False

    def _overview_clicked(self, ev) -> None:
        vb = self.overview.getPlotItem().getViewBox()
        if not self.big or not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        x = vb.mapSceneToView(ev.scenePos()).x()
        x0, x1 = self.region.getRegion()
        if not x0 <= x <= x1:
            self._place_window(x)

    def _tick_spacing(self, span: float) -> None:
        """Integer ticks (op indices), about 25 over `span` layers (the detail's range when large:
        a spacing made for a few layers drew thousands of labels over 1,500)."""
        step = next(v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if span / v <= 25)
        if step != getattr(self, "_step", None):
            self._step = step
            self.plot.getPlotItem().getAxis("bottom").setTickSpacing(major=step, minor=step)

    def _fill_window(self) -> None:
        """Curves and points of every series: all of them (a small result), or those in the
        detail's range (a large one, with a layer's margin so lines leave the view)."""
        self._filled_range = None
        if self.big:
            x0, x1 = self.plot.getPlotItem().getViewBox().viewRange()[0]
            self._tick_spacing(x1 - x0)
            self._filled_range = (x0, x1)
        for name in self.styles:
            curve, pts = self.curves[name], self.points[name]
            f = self._full.get(name)
            if f is None:
                curve.setData([], [])
                pts.setData([])
                continue
            cx, cy, x = f["cx"], f["cy"], f["x"]
            if self.big:
                a, b = np.searchsorted(x, [x0 - 1, x1 + 1])
                sel = (cx >= x0 - 1) & (cx <= x1 + 1)
                cx, cy = cx[sel], cy[sel]
            else:
                a, b = 0, len(x)
            curve.setData(cx, cy, antialias=not self.big)
            pts.opts["antialias"] = not self.big
            if self.big and b - a > POINTS_MAX:
                pts.setData([])  # zoomed far out: the curve (clicks find the nearest layer)
                continue
            res = f["res"]
            pts.setData(x=x[a:b], y=f["y"][a:b], data=[(name, int(i), res) for i in f["i"][a:b]])

    def _scene_clicked(self, ev) -> None:
        """A click beside the points (or with no points drawn, zoomed far out): the nearest layer
        of the accumulated curve within a few pixels."""
        if ev.isAccepted() or self.result is None or "accumulated" not in self._full:
            return
        vb = self.plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(ev.scenePos()):
            return
        f = self._full["accumulated"]
        if not len(f["x"]):
            return
        p = vb.mapSceneToView(ev.scenePos())
        k = int(np.clip(np.searchsorted(f["x"], p.x()), 0, len(f["x"]) - 1))
        near = [j for j in (k - 1, k) if 0 <= j < len(f["x"])]
        j = min(near, key=lambda j: abs(f["x"][j] - p.x()))
        px = vb.mapViewToScene(pg.Point(f["x"][j], f["y"][j]))
        if (px - ev.scenePos()).manhattanLength() <= 12:
            ev.accept()
            self.click_layer(int(f["i"][j]))

    def _headroom(self, *_args) -> None:
        """With the ∞ line drawn at the top, keep a text line of room above it for its label
        (in pixels, so also when the plot is short); on every resize."""
        ext = getattr(self, "_y_extent", None)
        if ext is None or self.empty.isVisible():
            return
        lo, hi = ext
        span = hi - lo or 1.0
        px = max(self.plot.getPlotItem().getViewBox().height(), 60.0)
        label_px = self.fontMetrics().height() + 6
        top = hi + span * label_px / max(px - label_px, 20.0)
        self.plot.getPlotItem().setYRange(lo - 0.05 * span, top + 0.02 * span, padding=0)
        self._draw_ring()

    def _set_title(self) -> None:
        r = self.result
        if r is None:
            self.title.setText(self.baseline_label and f"baseline: {self.baseline_label}")
            return
        iso = " · isolated error included" if r.isolated else " · without each layer's own error: tick 'own (isolated) error per layer' and run again"
        s = self.series.get("accumulated")
        shape = [r.layers[i].op_type for i, flag in enumerate(s.shape_only if s is not None else ()) if flag]
        kinds = ", ".join(dict.fromkeys(shape))
        off = f" · {len(shape)} integer shape op{'s' if len(shape) > 1 else ''} ({kinds}) not drawn: no quantization" if shape else ""
        ref = f" · reference: {r.reference}" if r.reference else ""
        self.title.setText(f"{len(r.layers)} layers · {r.samples} samples · runtime {r.runtime}{iso}{off}{ref}")

    def _draw_ring(self) -> None:
        s = self.series.get("accumulated")
        i = self.layer_position(self.selected)
        if s is None or i is None or not 0 <= i < len(s.values) or not s.drawn()[i]:
            self.ring.setData([])
            self.depth_cursor.hide()
            return
        y = s.values[i]
        if metric_spec(self.metric_key).log:
            y = np.log10(y) if y > 0 else np.nan
        self.ring.setData([float(s.depth[i])], [float(y)])
        self.depth_cursor.setValue(float(s.depth[i]))
        self.depth_cursor.show()

    def layer_position(self, op_index: int | None) -> int | None:
        """Position in result.layers of B's op `op_index` (its first output)."""
        return None if self.result is None else self.result.layer_position(op_index)

    def _tip(self, x, y, data) -> str:
        name, i, res = data
        if name == "worst":  # a mark of the worst layers
            return "one of the worst layers · " + self._tip(x, y, ("accumulated", i, res))
        s = self.series.get(name)
        if s is None or res is None:
            return ""
        head = {"baseline": self.baseline_label, "sample": self.sample_label}.get(name, name)
        return f"[{head}] " + layer_tooltip(res.layers[i], self.metric_key, s.raw[i], s.notes[i])

    # ------------------------------------------------------------------ clicks
    def _points_clicked(self, _item, points, _ev=None) -> None:
        if not len(points):
            return
        name, i, res = points[0].data()
        if name == "worst":
            self.click_layer(i)
            return
        if res is self.result or self.result is None:
            self.click_layer(i)
            return
        ft = res.layers[i].float_tensor  # another run: select the current layer of the same tensor
        hit = next((k for k, layer in enumerate(self.result.layers) if layer.float_tensor == ft), None)
        if hit is not None:
            self.click_layer(hit)

    def click_layer(self, i: int) -> None:
        """As if the user clicked the point of result.layers[i]: emits B's op index."""
        if self.result is None or not 0 <= i < len(self.result.layers):
            return
        op = self.result.layers[i].op_index
        self.set_selected(op)
        self.layer_clicked.emit(op)

    def point_data(self, name: str = "accumulated") -> tuple[np.ndarray, np.ndarray]:
        """(x, y) of the drawn points of one series (y in axis units: log10 on a log axis)."""
        self.ensure_drawn()
        f = self._full.get(name)
        if f is None:
            return np.array([]), np.array([])
        if not self.big:
            x, y = self.points[name].getData()
            return np.asarray(x), np.asarray(y)
        return f["x"].copy(), f["y"].copy()  # every layer's point (the detail draws those in its range)
