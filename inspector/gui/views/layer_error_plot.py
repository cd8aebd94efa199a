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
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from inspector.core.compare.result import ComparisonResult
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
        self.cursor = pg.InfiniteLine(angle=90, pen=pg.mkPen(COLOR_CLIP, width=1, style=Qt.PenStyle.DotLine))
        self.cursor.hide()
        self.exact_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(text_color(), width=1, style=Qt.PenStyle.DotLine),
                                          label=EXACT_LINE_LABEL, labelOpts={"position": 0.03, "color": text_color(), "anchors": [(0, 1), (0, 1)]})
        self.exact_line.hide()
        p.addItem(self.exact_line)
        p.addItem(self.ring, ignoreBounds=True)  # a marker never stretches the axes
        p.addItem(self.cursor, ignoreBounds=True)
        self.empty = pg.TextItem(EMPTY_TEXT, color=text_color(), anchor=(0.5, 0.5))
        p.addItem(self.empty)
        self._y_extent: tuple[float, float] | None = None
        p.getViewBox().sigResized.connect(self._headroom)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(bar)
        lay.addWidget(self.title)
        lay.addWidget(self.plot, 1)
        self.redraw()

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
        self.baseline, self.baseline_label = result, label
        self.redraw()

    def set_sample(self, result: ComparisonResult | None, label: str = "") -> None:
        self.sample, self.sample_label = result, label
        self.redraw()

    def set_selected(self, op_index: int | None) -> None:
        """Ring the layer of B's op `op_index` (None: no selection)."""
        self.selected = op_index
        self._draw_ring()

    # ------------------------------------------------------------------ drawing
    def redraw(self) -> None:
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
        n = max((layer.op_index for layer in r.layers), default=0) + 1 if r is not None else 0
        step = next(v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if n / v <= 25)
        p.getAxis("bottom").setTickSpacing(major=step, minor=step)  # op indices are integers
        top = exact_sqnr_position(self.baseline, r, self.sample)
        shown_y: list[float] = []
        for name, res, iso, label in runs:
            curve, pts = self.curves[name], self.points[name]
            s = layer_series(res, key, isolated=iso, name=label, exact_at=top) if res is not None else None
            if s is None or not len(s.values):
                curve.setData([], [])
                pts.setData([])
                continue
            x = s.depth.copy()
            if name in ("baseline", "sample") and r is not None:
                x = aligned_x(res, r)  # type: ignore[arg-type]
                order = np.argsort(x, kind="stable")
            else:
                order = np.arange(len(x))
            self.series[name] = s
            y = s.values
            plot_y = np.log10(np.where(y > 0, y, np.nan)) if choice.log else y
            ok = np.isfinite(plot_y) & s.drawn()
            shown_y.extend(plot_y[ok].tolist())
            on_curve = order[~np.asarray(s.shape_only, bool)[order]] if s.shape_only else order
            curve.setData(x[on_curve], plot_y[on_curve])
            pts.setData(
                x=x[ok], y=plot_y[ok],
                data=[(name, int(i), res) for i in np.flatnonzero(ok)],
            )
            color, _style, symbol = self.styles[name]
            legend.append((label, f"<span style='white-space:nowrap'><span style='color:{color}'>{MARKS[symbol]}</span>&nbsp;"
                                  f"{html.escape(label)}</span>"))  # an entry never wraps inside itself
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
        if self.empty.isVisible():
            self.empty.setPos(0.5, 0.5)
            p.setXRange(0, 1)
            p.setYRange(0, 1)
        else:
            self._draw_ring()  # at the new metric's height before the axes fit the data
            p.enableAutoRange()
            self._y_extent = (min(shown_y), max(max(shown_y), top)) if self.exact_line.isVisible() and shown_y else None
            self._headroom()
        self._draw_ring()
        self._set_title()

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
            self.cursor.hide()
            return
        y = s.values[i]
        if metric_spec(self.metric_key).log:
            y = np.log10(y) if y > 0 else np.nan
        self.ring.setData([float(s.depth[i])], [float(y)])
        self.cursor.setValue(float(s.depth[i]))
        self.cursor.show()

    def layer_position(self, op_index: int | None) -> int | None:
        """Position in result.layers of B's op `op_index` (its first output)."""
        return None if self.result is None else self.result.layer_position(op_index)

    def _tip(self, x, y, data) -> str:
        name, i, res = data
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
        x, y = self.points[name].getData()
        return np.asarray(x), np.asarray(y)
