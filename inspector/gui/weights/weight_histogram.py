"""Weight histogram: float (A) and dequantized (B) values overlaid, clip range, errors.

Renders an `inspector.core.compare.weights.WeightAnalysis`; computes nothing. Bins come aligned to
the quantization grid, so "Zoom to grid" shows the dequantized values as spikes one step S
apart with the float values spread between them. Below: SQNR and max |error| per channel;
clicking a channel shows that channel alone.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.weights import WeightAnalysis
from inspector.core.text.numbers import number
from inspector.core.viewdata.weight_view import (
    coarse_bins,
    data_extent,
    fine_bins,
    float16_summary,
    grid_of,
    grid_zoom,
)
from inspector.gui.binding import quietly
from inspector.gui.views.grid_axis import GridAxis
from inspector.gui.views.plot_style import (
    COLOR_A,
    COLOR_B,
    COLOR_CLIP,
    COLOR_SECOND,
    brush,
    legend_html,
    show_frame,
    style_plot,
)

EMPTY_TEXT = "Select a layer with weights, or a constant tensor, to see its weight histogram."


def summary_text(w: WeightAnalysis) -> str:
    """The label beside the plot: errors with units, grid step, clip range, sample size."""
    parts = []
    if w.metrics is not None:
        m = w.metrics
        steps = f" = {m.max_abs / w.grid_step:.2f} grid steps" if w.grid_step else ""
        parts.append(f"<b>SQNR {number(m.sqnr_db, 4, unit=' dB', symbols=True)}</b>")
        parts.append(f"max |error| {number(m.max_abs, 4, symbols=True)}{steps}")
        if m.rmse_over_scale is not None:
            parts.append(f"RMSE/scale {m.rmse_over_scale:.3f} (rounding alone ≈ 0.289)")
        if m.clip_rate is not None:
            parts.append(f"clipped {100 * m.clip_rate:.2f} %")
    if (f16 := float16_summary(w)) is not None:
        parts.append(f16)
    if w.grid_step is not None:
        parts.append(f"grid step S = {w.grid_step:.4g}")
    elif w.quant is not None and w.quant.per_channel:
        parts.append("each channel has its own grid: pick a channel to see it")
    if w.clip_lo is not None:
        parts.append(f"representable [{w.clip_lo:.4g}, {w.clip_hi:.4g}]")
    n = f"{w.used_elements:,} of {w.total_elements:,} values" if w.sampled else f"{w.total_elements:,} values"
    parts.append(n)
    return " · ".join(parts)


class WeightHistogramView(QWidget):
    channel_requested = Signal(object)  # int channel or None for all

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.analysis: WeightAnalysis | None = None
        self.title = QLabel()
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.title.setMinimumWidth(120)  # a long tensor name (TF joins op names) is cut, never widens the window
        self.summary = QLabel(EMPTY_TEXT)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.channel_combo = QComboBox()
        self.channel_combo.setMinimumContentsLength(18)
        self.channel_combo.setToolTip("Show all channels, or one channel with its own quantization grid")
        self.zoom_button = QPushButton("Zoom to grid")
        self.zoom_button.setToolTip("Zoom to a few quantization steps around zero")
        self.fit_button = QPushButton("Fit")
        self.log_check = QCheckBox("log count")
        self.detail_label = QLabel()
        self.fine: bool | None = None
        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)
        bar.addWidget(self.detail_label)
        bar.addWidget(QLabel("Channel:"))
        bar.addWidget(self.channel_combo)
        bar.addWidget(self.zoom_button)
        bar.addWidget(self.fit_button)
        bar.addWidget(self.log_check)

        self.x_axis = GridAxis("bottom")  # ticks on the quantization grid when zoomed in to it
        self.plot = pg.PlotWidget(axisItems={"bottom": self.x_axis})
        p = self.plot.getPlotItem()
        p.setLabel("bottom", "weight value")
        p.setLabel("left", "count")
        self.legend = QLabel()  # above the plot, never over the bars
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.region = pg.LinearRegionItem(movable=False, brush=brush(COLOR_CLIP, 18), pen=pg.mkPen(None))
        self.region.setZValue(-10)
        self.curve_a = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(COLOR_A, width=1.5), brush=brush(COLOR_A, 70), name="A float")
        self.curve_b = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(COLOR_B, width=1.5), brush=brush(COLOR_B, 90), name="B dequantized")
        opts = {"position": 0.97, "color": COLOR_CLIP, "movable": False}
        dash = pg.mkPen(COLOR_CLIP, width=1.5, style=Qt.PenStyle.DashLine)
        self.clip_lines = (
            pg.InfiniteLine(angle=90, pen=dash, label="clip lo", labelOpts=opts),
            pg.InfiniteLine(angle=90, pen=dash, label="clip hi", labelOpts=opts),
        )
        for it in (self.region, self.curve_a, self.curve_b, *self.clip_lines):
            p.addItem(it)
        self.empty_text = pg.TextItem(EMPTY_TEXT, anchor=(0.5, 0.5))
        p.addItem(self.empty_text)

        self.channel_plot = pg.GraphicsLayoutWidget()
        self.sqnr_plot = self.channel_plot.addPlot(title="SQNR by channel (dB)")
        self.sqnr_plot.setLabel("bottom", "channel")
        self.channel_plot.nextRow()
        self.maxerr_plot = self.channel_plot.addPlot(title="max |error| by channel (dotted: S/2)")
        self.maxerr_plot.setLabel("bottom", "channel")
        self.sqnr_points = pg.PlotDataItem(pen=pg.mkPen(COLOR_B, width=1), symbol="o", symbolSize=6, symbolBrush=COLOR_B, symbolPen=None)
        self.sqnr_plot.addItem(self.sqnr_points)
        self.sqnr_plot.setLabel("left", "dB")
        self.maxerr_plot.setLabel("left", "|error|")
        self.maxerr_points = pg.PlotDataItem(pen=pg.mkPen(COLOR_SECOND, width=1), symbol="o", symbolSize=6, symbolBrush=COLOR_SECOND, symbolPen=None)
        self.half_step = pg.PlotDataItem(pen=pg.mkPen(COLOR_CLIP, width=1, style=Qt.PenStyle.DotLine), name="S/2")
        self.maxerr_plot.addItem(self.half_step)
        self.maxerr_plot.addItem(self.maxerr_points)
        for item in (self.maxerr_points, self.sqnr_points):
            item.sigPointsClicked.connect(lambda _i, pts, _ev: self._pick_channel(pts))
        p.sigXRangeChanged.connect(self._update_detail)
        style_plot(self.plot)
        style_plot(self.channel_plot, [self.sqnr_plot, self.maxerr_plot])

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plot)
        split.addWidget(self.channel_plot)
        split.setSizes([650, 350])
        split.setStretchFactor(0, 2)
        split.setStretchFactor(1, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.summary)
        lay.addWidget(self.legend)
        lay.addWidget(split, 1)

        self.channel_combo.currentIndexChanged.connect(self._combo_changed)
        self.zoom_button.clicked.connect(lambda: self.zoom_to_grid())  # not zoom_to_grid(checked=False)
        self.fit_button.clicked.connect(lambda: self.plot.getPlotItem().autoRange())
        self.log_check.toggled.connect(self._set_log)
        self.set_analysis(None)

    # ------------------------------------------------------------------ rendering
    def _show_frame(self, on: bool) -> None:
        """Axes, grid and legend only when there is something to plot (no meaningless ±400 axes)."""
        p = self.plot.getPlotItem()
        show_frame(p, on)
        self.legend.setVisible(on)
        if not on:
            p.setRange(xRange=(-1, 1), yRange=(-1, 1), padding=0)
            self.empty_text.setPos(0, 0)

    def set_analysis(self, w: WeightAnalysis | None) -> None:
        self.analysis = w
        has = w is not None
        self.empty_text.setVisible(not has)
        self._show_frame(has)
        for it in (self.zoom_button, self.fit_button, self.channel_combo, self.log_check):
            it.setEnabled(has)
        self._fill_channels(w)
        self.fine = None
        self.x_axis.set_grid(None if w is None else grid_of(w))
        if w is None:
            self.detail_label.setText("")
            self.title.setText("")
            self.summary.setText(EMPTY_TEXT)
            self.empty_text.setText(EMPTY_TEXT)
            for c in (self.curve_a, self.curve_b, self.maxerr_points, self.half_step):
                c.setData([], [])
            self.sqnr_points.setData([], [])
            self.region.hide()
            for ln in self.clip_lines:
                ln.hide()
            self.channel_plot.hide()
            return
        src = w.b or w.a  # an analysis shown has A's or B's tensor
        name = src.name if src is not None else ""
        ch = f", channel {w.channel}" if w.channel is not None else ""
        self.title.setText(f"<b>{name}</b>{ch}")
        self.title.setToolTip(name)
        notes = "".join(f"<br><i>{n}</i>" for n in w.notes)
        self.summary.setText(summary_text(w) + notes)
        self.fine = None  # decided by _update_detail for the visible range
        entries = []
        if w.a_counts is not None and w.a is not None:
            entries.append((COLOR_A, w.a.describe()))
        if w.b_counts is not None and w.b is not None:
            entries.append((COLOR_B, w.b.describe()))
        if w.clip_lo is not None:
            entries.append((COLOR_CLIP, "representable range (clip lo … clip hi)"))
        self.legend.setText(legend_html(entries))
        if w.clip_lo is not None:
            self.region.setRegion((w.clip_lo, w.clip_hi))
            self.region.show()
            for ln, v in zip(self.clip_lines, (w.clip_lo, w.clip_hi), strict=True):
                ln.setValue(v)
                ln.show()
        else:
            self.region.hide()
            for ln in self.clip_lines:
                ln.hide()
        self._fill_channel_plot(w)
        self._fit_x(w)
        self._update_detail()

    def _update_detail(self, *_args) -> None:
        """Grid-resolved bins when zoomed in (a few hundred bins visible), coarse bins otherwise."""
        w = self.analysis
        if w is None:
            return
        x0, x1 = self.plot.getPlotItem().viewRange()[0]
        fine = fine_bins(w, x0, x1)
        if fine == self.fine:
            return
        self.fine = fine
        coarse = None if fine else coarse_bins(w)  # cut at the clip lines
        edges = w.edges if coarse is None else coarse.edges
        for curve, counts, side in (
            (self.curve_a, w.a_counts if coarse is None else coarse.a, w.a),
            (self.curve_b, w.b_counts if coarse is None else coarse.b, w.b),
        ):
            if counts is None or side is None:
                curve.setData([], [])
                curve.hide()
            else:
                curve.setData(edges, counts.astype(np.float64), stepMode="center", fillLevel=0)
                curve.show()
        self.detail_label.setText("bins: grid-resolved" if fine else "bins: coarse (zoom in for the grid)")

    def _fit_x(self, w: WeightAnalysis) -> None:
        """Fit the data (not the clip lines, which may lie far out for biases)."""
        extent = data_extent(w)
        if extent is None:
            return
        lo, hi = extent
        p = self.plot.getPlotItem()
        p.setXRange(lo, hi, padding=0.05)
        p.enableAutoRange(axis="y")

    def _fill_channel_plot(self, w: WeightAnalysis) -> None:
        if w.per_channel_sqnr_db is None:
            self.channel_plot.hide()
            return
        self.channel_plot.show()
        x = np.arange(len(w.per_channel_sqnr_db))
        sqnr = np.asarray(w.per_channel_sqnr_db, np.float64)
        shown = np.isfinite(sqnr)  # +inf = exact channel (no error), not a point on a dB axis
        exact = int(np.count_nonzero(~shown))
        title = "SQNR by channel (dB)"
        if exact:
            title += f" — {exact} channel{'s' if exact > 1 else ''} exact (no error), not drawn"
        self.sqnr_plot.setTitle(title)
        self.sqnr_points.setData(x[shown], sqnr[shown])
        self.maxerr_points.setData(x, w.per_channel_max_abs)
        bw = next((src.blockwise for src in (w.b, w.a) if src is not None and src.blockwise is not None), None)
        if w.quant is not None and w.quant.per_channel:
            self.half_step.setData(x, 0.5 * np.asarray(w.quant.scales))
            self.maxerr_plot.setTitle("max |error| by channel (dotted: S/2)")
        elif bw is not None and bw.scales.ndim == 2 and bw.scales.shape[0] == len(x):
            self.half_step.setData(x, 0.5 * bw.scales.max(axis=1))
            self.maxerr_plot.setTitle("max |error| by channel (dotted: largest block S/2)")
        else:
            self.half_step.setData([], [])
            self.maxerr_plot.setTitle("max |error| by channel")
        if shown.any():
            self.sqnr_plot.autoRange()
        self.maxerr_plot.autoRange()

    def _fill_channels(self, w: WeightAnalysis | None) -> None:
        with quietly(self.channel_combo):
            self.channel_combo.clear()
            # userData -1 = all: PySide6 6.12 mis-counts references of None/bools passed through
            # QVariant (itemData(None) crashes the interpreter at exit), so only ints go in.
            self.channel_combo.addItem("all channels", -1)
            if w is not None and w.quant is not None and w.quant.per_channel:
                for c, s in enumerate(w.quant.scales):
                    self.channel_combo.addItem(f"{c}  (S = {s:.3g})", c)
                self.channel_combo.setCurrentIndex(0 if w.channel is None else w.channel + 1)
            elif w is not None and w.blockwise is not None and w.num_channels > 1:
                rows = w.blockwise.scales.reshape(w.num_channels, -1)
                for c in range(w.num_channels):
                    self.channel_combo.addItem(f"{c}  (block S ≤ {rows[c].max():.3g})", c)
                self.channel_combo.setCurrentIndex(0 if w.channel is None else w.channel + 1)
            self.channel_combo.setEnabled(self.channel_combo.count() > 1)

    def set_empty_text(self, text: str | None) -> None:
        """With no analysis shown: `text` says why (an op without weights and what its constants
        are), its first line in the plot; None: the usual hint."""
        if self.analysis is not None:
            return
        self.summary.setText(EMPTY_TEXT if text is None else html.escape(text).replace("\n", "<br>"))
        self.empty_text.setText(EMPTY_TEXT if text is None else text.split(" has no weights")[0] + " has no weights")

    # ------------------------------------------------------------------ interaction
    def zoom_to_grid(self, steps: float = 16) -> None:
        """Zoom the x axis to about `steps` quantization steps around zero (core.viewdata.weight_view)."""
        w = self.analysis
        if w is None:
            return
        r = grid_zoom(w, steps)
        p = self.plot.getPlotItem()
        p.setXRange(r.x0, r.x1, padding=0)
        p.setYRange(0, r.y_max(self.log_check.isChecked()), padding=0)  # y_max has its own headroom

    def _set_log(self, on: bool) -> None:
        self.plot.getPlotItem().setLogMode(y=on)
        self.plot.getPlotItem().enableAutoRange(axis="y")

    def _combo_changed(self, i: int) -> None:
        c = self.channel_combo.itemData(i)
        self.channel_requested.emit(None if c is None or c < 0 else int(c))

    def _pick_channel(self, points) -> None:
        if len(points):
            self.channel_requested.emit(int(round(points[0].pos().x())))
