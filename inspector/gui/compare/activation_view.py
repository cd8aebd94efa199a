"""Activation view of the selected layer: float vs dequantized histograms and a scatter.

Left: histograms (`stepMode="center"`) on the quantization grid, the representable range as
dashed lines and the clipped mass as shaded regions beyond the saturation bounds. Right: float
(x) against dequantized (y) values with the y = x line: rounding spreads points along it,
clipping flattens them at the ends. Renders `core.viewdata.activations.ActivationHistogram`.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSizePolicy,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.result import LayerResult
from inspector.core.tflite.op_facts import facts
from inspector.core.viewdata.activations import ActivationHistogram
from inspector.core.viewdata.layer_series import clipping_matters, format_value, op_label
from inspector.gui.binding import quietly
from inspector.gui.views.plot_style import (
    COLOR_A,
    COLOR_B,
    COLOR_CLIP,
    brush,
    legend_html,
    show_frame,
    style_plot,
    text_color,
)

EMPTY_TEXT = "Run a comparison, then select a layer to see its activations."


class ActivationView(QWidget):
    collect_requested = Signal(int)  # quant tensor whose values were not kept

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.layer: LayerResult | None = None
        self.hist: ActivationHistogram | None = None
        self.title = QLabel(EMPTY_TEXT)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # a tensor name is one long word (300 characters in converted models): it must not set the
        # window's minimum width (it grew past a 1280 px screen); cut at the edge, whole in the tooltip
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.collect = QPushButton("Collect values (re-run)")
        self.collect.setToolTip("This model is large, so only the selected layer's values were kept: re-run keeping this one too")
        self.collect.hide()
        self.log_check = QCheckBox("log count")
        self.log_check.setToolTip("log10(1 + count): on by default when one bin (e.g. ReLU zeros) dwarfs the rest")
        self.log_check.toggled.connect(lambda _on: self._draw_counts())
        self.collect.clicked.connect(lambda: self.layer is not None and self.collect_requested.emit(self.layer.quant_tensor))
        head = QHBoxLayout()
        head.addWidget(self.title, 1)
        head.addWidget(self.collect)
        head.addWidget(self.log_check)

        self.hist_plot = pg.PlotWidget()
        self.scatter_plot = pg.PlotWidget()
        style_plot(self.hist_plot)
        style_plot(self.scatter_plot)
        hp, sp = self.hist_plot.getPlotItem(), self.scatter_plot.getPlotItem()
        hp.setLabel("bottom", "activation value")
        hp.setLabel("left", "count (kept values)")
        sp.setLabel("bottom", "float (A)")
        sp.setLabel("left", "dequantized (B)")
        self.legend = QLabel(legend_html([(COLOR_A, "A float"), (COLOR_B, "B dequantized"),
                                          (COLOR_CLIP, "beyond qmin / qmax: clipped")]))  # above the plots, not over data
        self.clip_regions = (
            pg.LinearRegionItem(movable=False, brush=brush(COLOR_CLIP, 40), pen=pg.mkPen(None)),
            pg.LinearRegionItem(movable=False, brush=brush(COLOR_CLIP, 40), pen=pg.mkPen(None)),
        )
        dash = pg.mkPen(COLOR_CLIP, width=1.5, style=Qt.PenStyle.DashLine)
        opts = {"position": 0.55, "color": COLOR_CLIP, "movable": False}
        self.range_lines = (
            pg.InfiniteLine(angle=90, pen=dash, label="qmin", labelOpts=opts),
            pg.InfiniteLine(angle=90, pen=dash, label="qmax", labelOpts=opts),
        )
        self.curve_a = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(COLOR_A, width=1.5), brush=brush(COLOR_A, 70), name="A float")
        self.curve_b = pg.PlotDataItem(stepMode="center", fillLevel=0, pen=pg.mkPen(COLOR_B, width=1.5), brush=brush(COLOR_B, 80), name="B dequantized")
        for it in (*self.clip_regions, *self.range_lines):
            it.setZValue(-10)
            hp.addItem(it)
        hp.addItem(self.curve_a)
        hp.addItem(self.curve_b)
        self.points = pg.ScatterPlotItem(size=4, pen=pg.mkPen(None), brush=brush(COLOR_B, 140))
        self.diagonal = pg.InfiniteLine(pos=(0, 0), angle=45, pen=pg.mkPen(text_color(), width=1, style=Qt.PenStyle.DashLine))
        sp.addItem(self.diagonal)
        sp.addItem(self.points)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.hist_plot)
        split.addWidget(self.scatter_plot)
        split.setSizes([600, 400])
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(head)
        lay.addWidget(self.legend)
        lay.addWidget(split, 1)
        self.show_layer(None, None)

    def show_layer(self, layer: LayerResult | None, hist: ActivationHistogram | None, message: str = "", depth: int | None = None) -> None:
        """Draw `hist` for `layer`; without values, say why (`message`)."""
        self.layer, self.hist = layer, hist
        self.collect.setVisible(layer is not None and hist is None and bool(message))
        for plot in (self.hist_plot, self.scatter_plot):  # no axes without data
            show_frame(plot.getPlotItem(), hist is not None)
        self.legend.setVisible(hist is not None)
        self.diagonal.setVisible(hist is not None)
        if hist is None:
            for c in (self.curve_a, self.curve_b):
                c.setData([], [])
            self.points.setData([])
            for it in (*self.clip_regions, *self.range_lines):
                it.hide()
            self.title.setText(message or EMPTY_TEXT)
            self.title.setToolTip("")
            return
        with quietly(self.log_check):
            self.log_check.setChecked(hist.peaked)
        self._draw_counts()
        self.points.setData(hist.scatter_x, hist.scatter_y)
        lo, hi = float(hist.edges[0]), float(hist.edges[-1])
        span = hi - lo
        clip_lo, clip_hi = hist.clip_lo, hist.clip_hi  # set with the representable range (half a step beyond it)
        if hist.rep_lo is not None and hist.rep_hi is not None and clip_lo is not None and clip_hi is not None:
            self.range_lines[0].setValue(hist.rep_lo)
            self.range_lines[1].setValue(hist.rep_hi)
            for line in self.range_lines:
                line.show()
            # shade beyond the saturation bounds (drawn over the visible part of the axis)
            self.clip_regions[0].setRegion((min(lo, clip_lo) - span, clip_lo))
            self.clip_regions[1].setRegion((clip_hi, max(hi, clip_hi) + span))
            for r in self.clip_regions:
                r.show()
        else:
            for it in (*self.clip_regions, *self.range_lines):
                it.hide()
        hp = self.hist_plot.getPlotItem()
        view_lo, view_hi = lo, hi
        if hist.rep_lo is not None and hist.rep_hi is not None and hist.rep_hi - hist.rep_lo <= 4 * max(span, 1e-30):
            view_lo, view_hi = min(lo, hist.rep_lo), max(hi, hist.rep_hi)  # show the range when it is near the data
        pad = 0.03 * (view_hi - view_lo or 1.0)
        hp.setXRange(view_lo - pad, view_hi + pad, padding=0)
        sp = self.scatter_plot.getPlotItem()
        if hist.scatter_x.size:
            a = float(min(hist.scatter_x.min(), hist.scatter_y.min()))
            b = float(max(hist.scatter_x.max(), hist.scatter_y.max()))
            pad = 0.03 * (b - a or 1.0)
            sp.setXRange(a - pad, b + pad, padding=0)
            sp.setYRange(a - pad, b + pad, padding=0)
        self.title.setText(self._title(layer, hist, depth))
        self.title.setToolTip(self.title.text())

    def _draw_counts(self) -> None:
        h = self.hist
        if h is None:
            return
        fa, fb = h.float_counts.astype(np.float64), h.quant_counts.astype(np.float64)
        log = self.log_check.isChecked()
        if log:
            fa, fb = np.log10(1 + fa), np.log10(1 + fb)
        self.curve_a.setData(h.edges, fa)
        self.curve_b.setData(h.edges, fb)
        hp = self.hist_plot.getPlotItem()
        hp.setLabel("left", "log10(1 + count)" if log else "count (kept values)")
        hp.setYRange(0, max(float(fa.max(initial=0)), float(fb.max(initial=0)), 1.0) * 1.08, padding=0)

    @staticmethod
    def _title(layer: LayerResult | None, h: ActivationHistogram, depth: int | None) -> str:
        if layer is None:
            return ""
        m = layer.metrics
        where = f"#{depth} " if depth is not None else ""
        parts = [f"<b>{where}{op_label(layer)} {layer.op_type}</b> → {layer.tensor_name}"]
        parts.append(f"SQNR {format_value(m.sqnr_db, 'sqnr_db')}")
        if h.rep_lo is not None:
            parts.append(f"representable [{h.rep_lo:.4g}, {h.rep_hi:.4g}]")
            clip = m.clip_rate
            text = (f"clipped {100 * h.clipped:.2f} % of shown values"
                    + (f" ({100 * clip:.3g} % of all {m.count:,})" if clip is not None else ""))
            warn = clipping_matters(clip if clip is not None else h.clipped, layer.op_type)  # colour only past the one clip threshold
            if facts(layer.op_type).fixed_outputs:
                text += " (past the end of the kernel's fixed output grid)"
            parts.append(f"<span style='color:{COLOR_CLIP}'>{text}</span>" if warn else text)
            if m.range_use is not None:
                parts.append(f"range use {100 * m.range_use:.3g} %")
        else:
            parts.append(f"{layer.dtype or 'float'} output: no quantization grid")
        if h.steps_per_bin:
            parts.append(f"{h.steps_per_bin} grid step{'s' if h.steps_per_bin > 1 else ''} per bin")
        shown = f"{h.used:,} of {h.total:,} values" if h.used < h.total else f"{h.used:,} values"
        parts.append(shown)
        return " · ".join(parts)

    def histogram_data(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(edges, float counts, dequantized counts) as drawn (log10(1 + count) when log is on)."""
        xa, ya = self.curve_a.getData()
        _, yb = self.curve_b.getData()
        return np.asarray(xa), np.asarray(ya), np.asarray(yb)
