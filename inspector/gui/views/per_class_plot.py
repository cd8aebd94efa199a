"""Per-class accuracy drop (float - quantized accuracy, in points) as a bar plot."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from inspector.core.compare.task import TaskResult
from inspector.gui.views.plot_style import (
    COLOR_CLIP,
    COLOR_SECOND,
    show_frame,
    style_plot,
    text_color,
)

EMPTY_TEXT = "Per-class accuracy needs labelled samples\n(an image folder with one subfolder per class, or an .npz with 'labels')."


class PerClassPlot(pg.PlotWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        style_plot(self)
        p = self.getPlotItem()
        p.setLabel("left", "accuracy drop (points)")
        p.setTitle("Per-class accuracy drop", color=text_color().name())
        p.setMenuEnabled(False)
        p.getAxis("bottom").setHeight(2 * self.fontMetrics().height() + 16)  # two-line tick labels
        self.bars: pg.BarGraphItem | None = None
        self.zero = pg.InfiniteLine(pos=0, angle=0, pen=pg.mkPen(text_color(), width=1))
        p.addItem(self.zero)
        self.empty = pg.TextItem(EMPTY_TEXT, color=text_color(), anchor=(0.5, 0.5))
        p.addItem(self.empty)
        self.labels: list[int] = []
        self.drops = np.zeros(0)
        self.set_task(None)

    def set_task(self, task: TaskResult | None) -> None:
        p = self.getPlotItem()
        if self.bars is not None:
            p.removeItem(self.bars)
            self.bars = None
        pc = task.per_class if task is not None else {}
        self.labels = sorted(pc)
        self.drops = np.array([pc[k]["drop_pct"] for k in self.labels], np.float64)
        self.empty.setVisible(not self.labels)
        show_frame(p, bool(self.labels))  # no 0..1 axes around the hint
        self.zero.setVisible(bool(self.labels))
        if not self.labels:
            p.getAxis("bottom").setTicks(None)
            self.empty.setPos(0.5, 0.5)
            p.setXRange(0, 1)
            p.setYRange(0, 1)
            return
        names = task.class_names if task is not None else None
        ticks = []
        for i, k in enumerate(self.labels):
            name = names[k] if names and 0 <= k < len(names) else str(k)
            c = pc[k]
            ticks.append((i, f"{name}\n{100 * c['float_accuracy']:.0f}→{100 * c['quant_accuracy']:.0f}%"))
        brushes = [pg.mkBrush(COLOR_CLIP if d > 0 else COLOR_SECOND) for d in self.drops]
        self.bars = pg.BarGraphItem(x=np.arange(len(self.labels)), height=self.drops, width=0.6, brushes=brushes, pen=pg.mkPen(None))
        p.addItem(self.bars)
        p.getAxis("bottom").setTicks([ticks])
        lo, hi = min(0.0, float(self.drops.min())), max(0.0, float(self.drops.max()))
        pad = 0.1 * (hi - lo or 10.0)
        p.setXRange(-0.6, len(self.labels) - 0.4, padding=0)
        p.setYRange(lo - pad, hi + pad, padding=0)
