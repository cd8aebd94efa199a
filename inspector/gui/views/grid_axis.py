"""An x axis whose ticks sit on a quantization grid when one is set and the view is zoomed in
enough (`core.viewdata.grid_ticks`): labelled every k-th level, a minor tick at each level.
Without a grid, or zoomed out, it is pyqtgraph's usual axis."""

from __future__ import annotations

import pyqtgraph as pg

from inspector.core.viewdata.grid_ticks import GridTicks, grid_ticks


class GridAxis(pg.AxisItem):
    def __init__(self, orientation: str = "bottom", **kw) -> None:
        super().__init__(orientation, **kw)
        self.enableAutoSIPrefix(False)  # the labels are the values themselves
        self.quant_grid: tuple[float, int] | None = None  # (S, Z)
        self.shown: GridTicks | None = None  # the grid ticks last drawn (None: the usual ticks)
        self._labels: dict[float, str] = {}

    def set_grid(self, grid: tuple[float, int] | None) -> None:
        """(S, Z) of the grid the ticks sit on, or None for the usual ticks."""
        self.quant_grid = None if grid is None or not grid[0] > 0 else (float(grid[0]), int(grid[1]))
        self.picture = None
        self.update()

    def max_ticks(self, size: float) -> int:
        """Labelled ticks that fit: one per ~80 px, at least 3."""
        return max(3, int(size // 80))

    def tickValues(self, minVal, maxVal, size):  # noqa: N802 (pyqtgraph's name)
        self.shown = None if self.quant_grid is None else grid_ticks(minVal, maxVal, *self.quant_grid, self.max_ticks(size))
        if self.shown is None:
            return super().tickValues(minVal, maxVal, size)
        self._labels = dict(self.shown.major)
        step = self.shown.stride * self.quant_grid[0]
        ticks = [(step, [v for v, _ in self.shown.major])]
        if self.shown.minor:
            ticks.append((self.quant_grid[0], list(self.shown.minor)))
        return ticks

    def tickStrings(self, values, scale, spacing):  # noqa: N802
        if self.shown is None:
            return super().tickStrings(values, scale, spacing)
        if self.quant_grid is not None and spacing < self.shown.stride * self.quant_grid[0] * 0.999:
            return ["" for _ in values]  # the minor ticks are not labelled
        return [self._labels.get(v, "") for v in values]
