"""Scales and zero-points of the selected quantized tensor, one point per channel.

A per-tensor tensor shows its single point; a tensor without quantization shows a hint.
Channels whose scale is far from the others (a frequent cause of bad accuracy) stand out on
the log axis.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from inspector.core.tflite.model import Tensor
from inspector.gui.views.plot_style import COLOR_B, COLOR_SECOND, style_plot

EMPTY_TEXT = "Select a quantized tensor to see its scales and zero-points by channel."


class PerChannelView(QWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.tensor: Tensor | None = None
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
        lay = QVBoxLayout(self)
        lay.addLayout(bar)
        lay.addWidget(self.plots, 1)
        self.log_check.toggled.connect(lambda on: self.scale_plot.setLogMode(y=on))
        self.set_tensor(None)

    def set_tensor(self, tensor: Tensor | None, label: str = "") -> None:
        self.tensor = tensor
        q = tensor.quantization if tensor is not None else None
        if tensor is None or q is None:
            self.title.setText(EMPTY_TEXT)
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
