"""Runtime parity tab: model B on two runtimes or thread counts, layer by layer.

Choosers for each side (runtime, threads), Run / Cancel with progress, then two plots against
B's op index (share of elements that differ, largest difference in LSB) with the first
divergence marked, and a table with the spec-mismatch column. Clicking a point or a row emits
`layer_clicked(op index of B)`; `set_selected(op)` highlights a layer. Draws what
`core.viewdata.parity_series` computed; computes nothing itself.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSpinBox,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.core.runtime.runner import RUNTIMES
from inspector.core.viewdata.parity_series import (
    format_lsb,
    format_share,
    parity_headline,
    parity_series,
)
from inspector.gui.parity.parity_table import ParityTable
from inspector.gui.views.plot_style import (
    COLOR_B,
    COLOR_CLIP,
    COLOR_SECOND,
    brush,
    style_plot,
    text_color,
)
from inspector.gui.views.run_row import RunRow

RUNTIME_LABELS = {"optimized": "optimized (XNNPACK)", "reference": "reference", "builtin_ref": "builtin_ref (slow)"}
EMPTY_TEXT = "Choose two runtimes or two thread counts and run: model B runs on both, layer by layer."


class SideChooser(QWidget):
    """One side: a runtime and a thread count."""

    def __init__(self, title: str, runtime: str, parent=None) -> None:
        super().__init__(parent)
        self.runtime = QComboBox()
        for key in RUNTIMES:
            self.runtime.addItem(RUNTIME_LABELS.get(key, key), key)
        self.runtime.setCurrentIndex(self.runtime.findData(runtime))
        self.runtime.setToolTip("\n".join(f"{k}: {v}" for k, v in RUNTIMES.items()))
        self.runtime.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.runtime.setMinimumContentsLength(14)  # the tab must not widen the window's minimum
        self.threads = QSpinBox(minimum=1, maximum=64, value=1)
        self.threads.setToolTip("Interpreter threads on this side")
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(QLabel(f"<b>{title}</b>"))
        lay.addWidget(self.runtime)
        lay.addWidget(QLabel("threads"))
        lay.addWidget(self.threads)


class ParityView(QWidget):
    run_requested = Signal(object, object)  # (runtime, runtime), (threads, threads)
    cancel_requested = Signal()
    layer_clicked = Signal(int)  # op index of B

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.result: RuntimeParityResult | None = None
        self.selected: int | None = None
        self.side1 = SideChooser("Side 1", "reference")
        self.side2 = SideChooser("Side 2", "optimized")
        self.run_row = RunRow("Run both sides", bar_beside=True, status="Not run yet.")
        self.run_button, self.cancel_button = self.run_row.run_button, self.run_row.cancel_button
        self.run_button.setToolTip("Run model B on both sides over the samples of the Layer error tab's inputs")
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.runtimes(), self.threads()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        self.samples = QLabel()
        self.samples.setWordWrap(True)
        self.samples.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.headline = QLabel()
        self.headline.setWordWrap(True)
        self.headline.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.headline.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

        choose = QHBoxLayout()
        choose.addWidget(self.side1)
        choose.addWidget(QLabel("vs"))
        choose.addWidget(self.side2)
        choose.addSpacing(12)
        choose.addWidget(self.samples, 1)

        self.plots = pg.GraphicsLayoutWidget()
        self.share_plot = self.plots.addPlot(row=0, col=0)
        self.lsb_plot = self.plots.addPlot(row=1, col=0)
        style_plot(self.plots, [self.share_plot, self.lsb_plot])
        self.lsb_plot.setXLink(self.share_plot)
        self.share_plot.setLabel("left", "differ %")
        self.lsb_plot.setLabel("left", "max LSB")
        self.lsb_plot.setLabel("bottom", "op index in model B (quantized)")
        for p in (self.share_plot, self.lsb_plot):
            p.setMenuEnabled(False)
            p.getViewBox().setDefaultPadding(0.04)
        self.share_points = self._scatter(self.share_plot, COLOR_B, "o")
        self.lsb_points = self._scatter(self.lsb_plot, COLOR_SECOND, "s")
        self.first_lines = []
        for p in (self.share_plot, self.lsb_plot):
            line = pg.InfiniteLine(angle=90, pen=pg.mkPen(COLOR_CLIP, width=1.5, style=Qt.PenStyle.DashLine))
            line.hide()
            p.addItem(line)
            self.first_lines.append(line)
        self.rings = []
        for p in (self.share_plot, self.lsb_plot):
            ring = pg.ScatterPlotItem(symbol="o", size=16, pen=pg.mkPen(COLOR_CLIP, width=2), brush=pg.mkBrush(None))
            ring.setZValue(20)
            p.addItem(ring)
            self.rings.append(ring)
        self.empty = pg.TextItem(EMPTY_TEXT, color=text_color(), anchor=(0.5, 0.5))
        self.share_plot.addItem(self.empty)

        self.table = ParityTable()
        self.table.op_clicked.connect(self._row_clicked)

        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.plots)
        split.addWidget(self.table)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        split.setSizes([560, 640])
        self.splitter = split

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(choose)
        lay.addWidget(self.run_row)
        lay.addWidget(self.headline)
        lay.addWidget(split, 1)
        self.set_result(None)

    def _scatter(self, plot: pg.PlotItem, color: str, symbol: str) -> pg.ScatterPlotItem:
        curve = pg.PlotCurveItem(pen=pg.mkPen(color, width=1.2), connect="finite")
        plot.addItem(curve)
        pts = pg.ScatterPlotItem(symbol=symbol, size=8, pen=pg.mkPen(color), brush=brush(color, 200),
                                 hoverable=True, hoverSize=12, tip=self._tip)
        pts.sigClicked.connect(self._points_clicked)
        pts.curve = curve
        plot.addItem(pts)
        return pts

    # ------------------------------------------------------------------ inputs
    def runtimes(self) -> tuple[str, str]:
        return (self.side1.runtime.currentData(), self.side2.runtime.currentData())

    def threads(self) -> tuple[int, int]:
        return (self.side1.threads.value(), self.side2.threads.value())

    def set_samples_text(self, text: str) -> None:
        self.samples.setText(f"Samples: {text} (the Layer error tab's inputs)")

    def set_running(self, running: bool, text: str = "") -> None:
        self.run_row.set_running(running, text)

    def set_progress(self, fraction: float, text: str) -> None:
        self.run_row.set_progress(fraction, text)

    # ------------------------------------------------------------------ result
    def set_result(self, result: RuntimeParityResult | None) -> None:
        self.result = result
        self.table.set_result(result)
        self._draw(result)
        self.headline.setText("" if result is None else parity_headline(result))
        self.headline.setVisible(result is not None)
        self.set_selected(self.selected)

    def _draw(self, result: RuntimeParityResult | None) -> None:
        if result is None or not result.layers:
            for pts in (self.share_points, self.lsb_points):
                pts.setData([], [])
                pts.curve.setData([], [])
            for line in self.first_lines:
                line.hide()
            self.share_plot.setTitle(None)
            self.empty.setText(EMPTY_TEXT if result is None else "No layer outputs to compare.")
            self.empty.show()
            self._axes(False)
            self.share_plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
            self.empty.setPos(0.5, 0.5)
            return
        self.empty.hide()
        self._axes(True)
        s = parity_series(result)
        lsb = np.nan_to_num(s.max_lsb, nan=0.0)
        for pts, y, raw in ((self.share_points, s.differ_pct, s.differ_pct), (self.lsb_points, lsb, s.max_lsb)):
            pts.setData(x=s.op_index.astype(float), y=y, data=list(range(len(y))))
            pts.curve.setData(s.op_index.astype(float), np.where(np.isfinite(raw), y, np.nan))
        if s.first is not None:
            x = float(s.op_index[s.first])
            for line in self.first_lines:
                line.setValue(x)
                line.show()
            layer = result.layers[s.first]
            # in the title above the axes: a label inside the plot covered the points beside the line
            self.share_plot.setTitle(f"<span style='color:{COLOR_CLIP}'>┆ first divergence: op {layer.op_index} {layer.op_type}</span>")
        else:
            for line in self.first_lines:
                line.hide()
            self.share_plot.setTitle(None)
        self.share_plot.enableAutoRange()
        self.lsb_plot.enableAutoRange()

    def _axes(self, shown: bool) -> None:
        """No axes, grid or second plot without data: only the hint."""
        for p in (self.share_plot, self.lsb_plot):
            for name in ("left", "bottom"):
                p.showAxis(name, shown)
            p.showGrid(x=shown, y=shown, alpha=0.15)
        self.lsb_plot.setVisible(shown)

    def point_data(self, which: str = "share") -> tuple[np.ndarray, np.ndarray]:
        pts = self.share_points if which == "share" else self.lsb_points
        x, y = pts.getData()
        return np.asarray(x), np.asarray(y)

    def _tip(self, x, y, data) -> str:
        if self.result is None:
            return ""
        layer = self.result.layers[data]
        return (f"op {layer.op_index} {layer.op_type}\n{layer.tensor_name}\n"
                f"{format_share(layer.differ_share)} of elements differ, max {format_lsb(layer.max_lsb)} LSB")

    # ------------------------------------------------------------------ selection
    def _points_clicked(self, _item, points, _ev=None) -> None:
        if len(points) and self.result is not None:
            self.click_layer(self.result.layers[points[0].data()].op_index)

    def click_layer(self, op_index: int) -> None:
        """As if the user clicked layer `op_index` (B's op index) in the plot."""
        self.set_selected(op_index)
        self.layer_clicked.emit(op_index)

    def _row_clicked(self, op_index: int) -> None:
        self.selected = op_index
        self._ring(op_index)
        self.layer_clicked.emit(op_index)

    def set_selected(self, op_index: int | None) -> None:
        self.selected = op_index
        self._ring(op_index)
        self.table.select_op(op_index)

    def _row_of(self, op_index: int | None) -> int | None:
        return None if self.result is None else self.result.layer_position(op_index)

    def _ring(self, op_index: int | None) -> None:
        row = self._row_of(op_index)
        for ring, pts in zip(self.rings, (self.share_points, self.lsb_points), strict=True):
            if row is None:
                ring.setData([], [])
            else:
                x, y = pts.getData()
                ring.setData([x[row]], [y[row]])
