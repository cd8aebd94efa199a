"""Per-class accuracy drop (float - quantized accuracy, in points) as a bar plot; for a regression
output, its MAE, RMSE and max error as a share of the float output's range (from core's
`RegressionMetrics`), since a regression output has no classes."""

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
        p.setLabel("left", "drop (points)")  # short: the plot is ~120 px tall at 1280x800 (the title says what drops)
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
        self.ticks: list[tuple[int, str]] = []  # every bar's label; `shown_ticks` those drawn
        self.shown_ticks: list[tuple[int, str]] = []
        self.set_task(None)

    def _set_ticks(self, ticks: list[tuple[int, str]]) -> None:
        self.ticks = ticks
        self._fit_ticks()

    def _fit_ticks(self) -> None:
        """Every k-th bar's label, k so that the labels drawn never overlap at this width (ten
        classes at 1280x800 overlapped); the bars are all drawn, their names in the tooltip."""
        axis = self.getPlotItem().getAxis("bottom")
        if not self.ticks:
            self.shown_ticks = []
            axis.setTicks(None)
            return
        fm = self.fontMetrics()
        label_px = max(fm.horizontalAdvance(line) for _i, t in self.ticks for line in t.split("\n")) + 12
        width = axis.width() if axis.width() > 1 else self.width() - 60
        per_bar = max(width, 1) / max(len(self.ticks) + 0.2, 1)
        step = max(1, int(np.ceil(label_px / per_bar)))
        self.shown_ticks = self.ticks[::step]
        axis.setTicks([self.shown_ticks])
        self.setToolTip("\n".join(t.replace("\n", ": ") for _i, t in self.ticks) if step > 1 else "")

    def resizeEvent(self, e) -> None:  # noqa: N802
        super().resizeEvent(e)
        built = getattr(self, "shown_ticks", None) is not None  # pyqtgraph calls it (with None) while building
        if built and (e is None or e.oldSize().width() != e.size().width()):
            self._fit_ticks()

    def set_task(self, task: TaskResult | None) -> None:
        p = self.getPlotItem()
        if self.bars is not None:
            p.removeItem(self.bars)
            self.bars = None
        if task is not None and task.regression is not None:
            self._set_regression(task)
            return
        p.setTitle("Per-class accuracy drop", color=text_color().name())
        p.setLabel("left", "drop (points)")  # short: the plot is ~120 px tall at 1280x800 (the title says what drops)
        self.empty.setText(EMPTY_TEXT)
        pc = task.per_class if task is not None else {}
        self.labels = sorted(pc)
        self.drops = np.array([pc[k]["drop_pct"] for k in self.labels], np.float64)
        self.empty.setVisible(not self.labels)
        show_frame(p, bool(self.labels))  # no 0..1 axes around the hint
        self.zero.setVisible(bool(self.labels))
        if not self.labels:
            self._set_ticks([])
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
        self._set_ticks(ticks)
        lo, hi = min(0.0, float(self.drops.min())), max(0.0, float(self.drops.max()))
        pad = 0.1 * (hi - lo or 10.0)
        p.setXRange(-0.6, len(self.labels) - 0.4, padding=0)
        p.setYRange(lo - pad, hi + pad, padding=0)

    def _set_regression(self, task: TaskResult) -> None:
        """Three bars: MAE, RMSE and max error in % of the float output's range."""
        p = self.getPlotItem()
        m = task.regression
        assert m is not None
        p.setTitle(f"Regression error of '{m.name}' (no classes)", color=text_color().name())
        p.setLabel("left", "% of float range")
        p.getAxis("left").enableAutoSIPrefix(False)
        rel = [m.relative(v) for v in (m.mae, m.rmse, m.max_error)]
        self.labels = []
        if any(v is None for v in rel):  # a constant float output: nothing to be relative to
            self.drops = np.zeros(0)
            self.empty.setText(f"The float output is constant: no range to relate the errors to.\n{m.summary()}")
            self.empty.setVisible(True)
            show_frame(p, False)
            self.zero.setVisible(False)
            self._set_ticks([])
            self.empty.setPos(0.5, 0.5)
            p.setXRange(0, 1)
            p.setYRange(0, 1)
            return
        self.drops = 100.0 * np.array(rel, np.float64)
        self.empty.setVisible(False)
        show_frame(p, True)
        self.zero.setVisible(True)
        names = (("MAE", m.mae), ("RMSE", m.rmse), ("max error", m.max_error))
        ticks = [(i, f"{n}\n{v:.3g} ({d:.2f}%)") for i, ((n, v), d) in enumerate(zip(names, self.drops, strict=True))]
        self.bars = pg.BarGraphItem(x=np.arange(3), height=self.drops, width=0.6, brush=pg.mkBrush(COLOR_CLIP), pen=pg.mkPen(None))
        p.addItem(self.bars)
        self._set_ticks(ticks)
        p.setXRange(-0.6, 2.6, padding=0)
        p.setYRange(0, float(self.drops.max()) * 1.15 or 1.0, padding=0)
