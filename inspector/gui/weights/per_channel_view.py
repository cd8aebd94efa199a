"""Scales and zero-points of the selected quantized tensor, one point per channel.

A per-tensor tensor shows its single point; a tensor without quantization shows a hint.
Channels whose scale is far from the others (a frequent cause of bad accuracy) stand out on
the log axis. After a comparison, the selected layer's error by channel (SQNR and steps of B's
grid each channel's float range spans, `viewdata.channel_series`) follows below, with a
concatenation's input slices shaded and labelled (red: 20 dB or more below the tensor).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from inspector.core.compare.result import LayerResult
from inspector.core.tflite.model import Tensor
from inspector.core.viewdata.channel_series import channel_series
from inspector.gui.views.plot_style import (
    COLOR_A,
    COLOR_B,
    COLOR_CLIP,
    COLOR_SECOND,
    brush,
    style_plot,
)

EMPTY_TEXT = "Select a quantized tensor to see its scales and zero-points by channel."


class PerChannelView(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tensor: Tensor | None = None
        self.has_channels = False  # the selected layer's channels are drawn (`set_layer`)
        self.title = QLabel(EMPTY_TEXT)
        self.title.setWordWrap(True)
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.log_check = QCheckBox("log scale axis")
        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)
        bar.addWidget(self.log_check)
        self.plots = pg.GraphicsLayoutWidget()
        self.scale_plot = self.plots.addPlot(title="scale by channel")
        self.plots.nextRow()
        self.zp_plot = self.plots.addPlot(title="zero-point by channel")
        self.zp_plot.setXLink(self.scale_plot)
        for p, unit in ((self.scale_plot, "scale S"), (self.zp_plot, "zero-point Z")):
            p.setLabel("bottom", "channel")
            p.setLabel("left", unit)
        self.scale_points = pg.PlotDataItem(
            pen=pg.mkPen(COLOR_B, width=1), symbol="o", symbolSize=6, symbolBrush=COLOR_B, symbolPen=None
        )
        self.zp_points = pg.PlotDataItem(
            pen=pg.mkPen(COLOR_SECOND, width=1), symbol="s", symbolSize=6, symbolBrush=COLOR_SECOND, symbolPen=None
        )
        self.scale_plot.addItem(self.scale_points)
        self.zp_plot.addItem(self.zp_points)
        self.zp_plot.getAxis("left").enableAutoSIPrefix(False)
        style_plot(self.plots, [self.scale_plot, self.zp_plot])
        self.channel_title = QLabel()
        self.channel_title.setWordWrap(True)
        self.channel_title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.channel_plots = pg.GraphicsLayoutWidget()
        self.sqnr_plot = self.channel_plots.addPlot(title="SQNR by channel (dB), last comparison")
        self.channel_plots.nextRow()
        self.steps_plot = self.channel_plots.addPlot(title="steps of B's grid used by each channel's float range")
        self.steps_plot.setXLink(self.sqnr_plot)
        for p, unit in ((self.sqnr_plot, "SQNR (dB)"), (self.steps_plot, "steps")):
            p.setLabel("bottom", "channel")
            p.setLabel("left", unit)
        self.sqnr_points = pg.PlotDataItem(pen=None, symbol="o", symbolSize=6, symbolBrush=COLOR_B, symbolPen=None)
        self.steps_points = pg.PlotDataItem(pen=None, symbol="s", symbolSize=6, symbolBrush=COLOR_A, symbolPen=None)
        self.tensor_line = pg.InfiniteLine(angle=0, pen=pg.mkPen(COLOR_SECOND, width=1, style=Qt.PenStyle.DashLine),
                                           label="tensor {value:.1f} dB", labelOpts={"position": 0.5, "color": COLOR_SECOND})
        self.sqnr_plot.addItem(self.sqnr_points)
        self.sqnr_plot.addItem(self.tensor_line)
        self.steps_plot.addItem(self.steps_points)
        self.slice_items: list = []
        style_plot(self.channel_plots, [self.sqnr_plot, self.steps_plot])
        channels = QWidget()  # the layer's channels beside the tensor's scales: each keeps the full height
        side = QVBoxLayout(channels)
        side.setContentsMargins(0, 0, 0, 0)
        side.addWidget(self.channel_title)
        side.addWidget(self.channel_plots, 1)
        self.channel_box = channels
        row = QHBoxLayout()
        row.addWidget(self.plots, 1)
        row.addWidget(channels, 1)
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addLayout(row, 1)
        self.set_layer(None)
        self.log_check.toggled.connect(lambda on: self.scale_plot.setLogMode(y=on))
        self.set_tensor(None)

    def set_layer(self, layer: LayerResult | None) -> None:
        """The compared layer whose channels (and slices) to draw; None hides them."""
        for plot, item in self.slice_items:
            plot.removeItem(item)
        self.slice_items = []
        s = channel_series(layer)
        self.has_channels = s is not None
        if s is None:
            self.channel_title.setText("")
            self.channel_box.hide()
            self._fit()
            return
        self.channel_box.show()
        verdict = f"<br><span style='color:{COLOR_CLIP}'>⚠ {s.verdict}</span>" if s.verdict else ""
        self.channel_title.setText(f"{s.title}{verdict}")
        self.sqnr_points.setData(s.x, s.sqnr_db)
        self.tensor_line.setVisible(s.tensor_sqnr_db is not None)
        if s.tensor_sqnr_db is not None:
            self.tensor_line.setValue(s.tensor_sqnr_db)
        self.steps_points.setData(s.x if s.steps_used is not None else [], s.steps_used if s.steps_used is not None else [])
        for k, m in enumerate(s.slices):
            color = COLOR_CLIP if m.far_below else (COLOR_SECOND if k % 2 else COLOR_A)
            for plot in (self.sqnr_plot, self.steps_plot):
                region = pg.LinearRegionItem((m.start - 0.45, m.stop - 0.55), movable=False, brush=brush(color, 40),
                                             pen=pg.mkPen(color, width=1))
                region.setZValue(-10)
                plot.addItem(region)
                self.slice_items.append((plot, region))
            text = pg.TextItem(m.label, color=color, anchor=(0, 0))  # hangs below the top of the view
            self.sqnr_plot.addItem(text)
            self.slice_items.append((self.sqnr_plot, text))
        shown = s.sqnr_db[np.isfinite(s.sqnr_db)]
        lo, hi = (float(shown.min()), float(shown.max())) if shown.size else (0.0, 1.0)
        top = hi + max(0.25 * (hi - lo), 5.0)  # room above the points for the slice labels
        for k, (_plot, item) in enumerate(it for it in self.slice_items if isinstance(it[1], pg.TextItem)):
            item.setPos(s.slices[k].start - 0.45, top)
        self.sqnr_plot.setYRange(lo - 0.05 * (top - lo) - 1, top, padding=0)
        step = next(v for v in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 10**9) if len(s.x) / v <= 20)
        for p in (self.sqnr_plot, self.steps_plot):
            p.getAxis("bottom").setTickSpacing(major=step, minor=step)  # channels are integers
        self.sqnr_plot.setXRange(-0.6, len(s.x) - 0.4, padding=0)
        self.steps_plot.enableAutoRange(axis="y")
        self._fit()

    def _fit(self) -> None:
        """A per-tensor activation's one scale says little beside its channels: with channels shown,
        its scale and zero-point plots give them the room (the title line keeps its figures)."""
        q = None if self.tensor is None else self.tensor.quantization
        per_tensor = q is not None and q.blockwise is None and not q.per_channel
        if self.has_channels and per_tensor:
            self.plots.hide()
        elif q is not None and q.blockwise is None:
            self.plots.show()

    def set_tensor(self, tensor: Tensor | None, label: str = "") -> None:
        self.tensor = tensor
        q = tensor.quantization if tensor is not None else None
        if tensor is None or q is None:
            self.title.setText(EMPTY_TEXT if not self.has_channels else "")
            self.scale_points.setData([], [])
            self.zp_points.setData([], [])
            self.plots.hide()
            return
        if q.blockwise is not None:  # no scales of its own: they are another tensor's values
            self.scale_points.setData([], [])
            self.zp_points.setData([], [])
            self.plots.hide()
            self.title.setText(
                f"<b>{tensor.name}</b> — {label} {tensor.dtype}, blockwise: one scale per block of "
                f"{q.blockwise.block_size} inputs, stored in tensor {q.blockwise.scale_tensor}. The block scales are "
                "summarised in the tensor table and the op math panel; the weight view dequantizes per block."
            )
            return
        self.plots.show()
        x = np.arange(q.num_channels)
        scales = np.asarray(q.scales, np.float64)
        self.scale_points.setData(x, scales)
        self.zp_points.setData(x, np.asarray(q.zero_points, np.float64))
        kind = (
            f"per-channel along dimension {q.quantized_dimension} ({q.num_channels} channels)"
            if q.per_channel
            else "per-tensor: one scale and zero-point"
        )
        spread = f"; largest/smallest scale {scales.max() / scales.min():.2f}×" if q.per_channel and scales.min() > 0 else ""
        self.title.setText(f"<b>{tensor.name}</b> — {label} {tensor.dtype}, {kind}{spread}")
        # A log axis only helps when scales span decades (pyqtgraph shows no ticks inside one).
        self.log_check.setChecked(bool(scales.min() > 0 and scales.max() / scales.min() > 10))
        zps = np.asarray(q.zero_points)
        if zps.min() == zps.max():
            self.zp_plot.setYRange(float(zps[0]) - 1, float(zps[0]) + 1, padding=0.1)
        self.scale_plot.enableAutoRange()
        if zps.min() != zps.max():
            self.zp_plot.enableAutoRange()
        self._fit()
