"""Worst samples of a comparison (classifier: flipped predictions first, then lowest output SQNR;
regression output: largest RMSE first, with RMSE, MAE and max error) beside the per-class
accuracy drop (or a regression output's errors relative to its float range). Image samples get a thumbnail. Selecting a row emits the sample index;
the comparison controller re-runs that sample and the layer error plot shows where it goes wrong.
Ranking and numbers come from `core.task.TaskResult`."""

from __future__ import annotations

import threading
from pathlib import Path

from PySide6.QtCore import QObject, QSize, Qt, QThreadPool, Signal
from PySide6.QtGui import QBrush, QColor, QIcon, QImage, QImageReader, QPixmap
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.task import SampleOutcome, TaskResult
from inspector.core.viewdata.layer_series import format_value
from inspector.gui.binding import quietly
from inspector.gui.compare.per_class_plot import PerClassPlot

COLUMNS = ("Rank", "Sample", "Label", "Float prediction", "Quantized prediction", "Output SQNR", "Cosine")
REGRESSION_COLUMNS = ("Rank", "Sample", "RMSE", "MAE", "Max error", "Output SQNR", "Cosine")
THUMB = 40
MAX_ROWS = 500  # the worst ones; enough to browse, cheap to fill
FLIP_COLOR = "#d62728"
EMPTY_TEXT = "Run a comparison to rank samples by how much quantization changed their output."


def thumbnail_image(path: Path, size: int = THUMB) -> QImage | None:
    """A small image of an image file, decoded at thumbnail size; None when it cannot be read.
    QImage (unlike QPixmap) may be made off the GUI thread."""
    reader = QImageReader(str(path))
    full = reader.size()
    if full.isValid() and full.width() > 0 and full.height() > 0:
        reader.setScaledSize(full.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio))
    img = reader.read()
    if img.isNull():
        return None
    if img.width() < size and img.height() < size:  # small images: scale up crisply
        img = img.scaled(size, size, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.FastTransformation)
    return img


class ThumbnailLoader(QObject):
    """Decodes thumbnails on a pool thread, in row order, and hands each to the GUI thread;
    `stop()` (a new list) ends it after the current image."""

    loaded = Signal(int, int, QImage)  # generation, row, image
    done = Signal(int)  # generation

    def __init__(self, generation: int, items: list[tuple[int, Path]]) -> None:
        super().__init__()
        self.generation = generation
        self.items = items
        self._stop = threading.Event()

    def stop(self) -> None:
        self._stop.set()

    def run(self) -> None:
        for row, path in self.items:
            if self._stop.is_set():
                return
            img = thumbnail_image(path)
            if img is not None and not self._stop.is_set():
                self.loaded.emit(self.generation, row, img)
        self.done.emit(self.generation)

    def start(self) -> None:
        QThreadPool.globalInstance().start(self.run)


class WorstSamplesView(QWidget):
    sample_selected = Signal(int)  # sample index

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.task: TaskResult | None = None
        self.rows: list[SampleOutcome] = []
        self.folder: Path | None = None
        self._thumbs: ThumbnailLoader | None = None
        self._generation = 0
        self.summary = QLabel(EMPTY_TEXT)
        self.summary.setWordWrap(True)
        self.summary.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.setIconSize(QSize(THUMB, THUMB))
        self.table.setWordWrap(False)
        self.table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a long sample path keeps its file name
        h = self.table.horizontalHeader()
        h.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        for col, w in ((0, 40), (2, 100), (3, 110), (4, 150), (5, 100), (6, 70)):
            self.table.setColumnWidth(col, w)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.per_class = PerClassPlot()
        left = QWidget()
        ll = QVBoxLayout(left)
        ll.setContentsMargins(0, 0, 0, 0)
        ll.addWidget(self.summary)
        ll.addWidget(self.table, 1)
        self.side = QSplitter(Qt.Orientation.Vertical)
        self.side.addWidget(self.per_class)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(left)
        split.addWidget(self.side)
        split.setSizes([900, 500])
        split.setStretchFactor(0, 9)
        split.setStretchFactor(1, 5)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(split)

    def add_side(self, widget: QWidget) -> None:
        """Another view beside the list, below the per-class plot (e.g. the sample's layer error)."""
        self.side.addWidget(widget)
        self.side.setSizes([200, 260])

    def set_task(self, task: TaskResult | None, folder: str | Path | None = None, note: str = "") -> None:
        """Show `task`'s samples, worst first; `folder` (an image-folder source) enables thumbnails."""
        self.task = task
        self.folder = Path(folder) if folder and Path(folder).is_dir() else None
        with quietly(self.table):
            self.table.setRowCount(0)
            self.rows = task.worst(min(MAX_ROWS, task.num_samples)) if task is not None else []
            self.table.setRowCount(len(self.rows))
            rh = THUMB + 6 if self.folder is not None else self.fontMetrics().height() + 8
            self.table.verticalHeader().setDefaultSectionSize(rh)
            names = task.class_names if task is not None else None
            regression = task is not None and task.kind == "regression"
            self.table.setHorizontalHeaderLabels(REGRESSION_COLUMNS if regression else COLUMNS)
            for r, o in enumerate(self.rows):
                self._fill_row(r, o, names, regression)
            for col in (0, 2, 3, 4, 5, 6):  # the figures' columns as wide as their text: the Sample column gets the rest
                self.table.resizeColumnToContents(col)
        self._load_thumbnails()
        self.per_class.set_task(task)
        self.summary.setText(self._summary(task, note))

    def _fill_row(self, r: int, o: SampleOutcome, names, regression: bool = False) -> None:
        def name(k):
            if k is None:
                return "—"
            return f"{names[k]} ({k})" if names and 0 <= k < len(names) else str(k)

        middle = ([f"{o.rmse:.4g}", f"{o.mae:.4g}", f"{o.max_abs:.4g}"] if regression else
                  [name(o.label), name(o.float_pred) + ("  (tied)" if o.float_tied else ""),
                   name(o.quant_pred) + ("  ⚠ tied: lost decision" if o.flipped and o.quant_tied else "  ⚠ flipped" if o.flipped
                                        else "  (tied)" if o.quant_tied else "")])
        cells = [str(r + 1), o.source, *middle, format_value(o.output_sqnr_db, "sqnr_db"),
                 "n/a" if o.cosine is None else f"{o.cosine:.5f}"]
        for c, text in enumerate(cells):
            it = QTableWidgetItem(text)
            it.setData(Qt.ItemDataRole.UserRole, o.index)
            if o.flipped and c in (3, 4):
                it.setForeground(QBrush(QColor(FLIP_COLOR)))
            if c in (0, 5, 6) or (regression and c in (2, 3, 4)):
                it.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            self.table.setItem(r, c, it)
        if (src := self.table.item(r, 1)) is not None:
            src.setToolTip(f"sample #{o.index}: {o.source}")

    def _load_thumbnails(self) -> None:
        """Thumbnails arrive from a pool thread (hundreds of photos would freeze the window)."""
        if self._thumbs is not None:
            self._thumbs.stop()
            self._thumbs = None
        self._generation += 1
        if self.folder is None or not self.rows:
            return
        loader = ThumbnailLoader(self._generation, [(r, self.folder / o.source) for r, o in enumerate(self.rows)])
        loader.loaded.connect(self._thumbnail_loaded)
        loader.done.connect(self._thumbnails_done)
        self._thumbs = loader
        loader.start()

    @property
    def thumbnails_loading(self) -> bool:
        return self._thumbs is not None

    def _thumbnail_loaded(self, generation: int, row: int, img: QImage) -> None:
        if generation != self._generation or row >= self.table.rowCount():
            return
        item = self.table.item(row, 1)
        if item is not None:
            item.setIcon(QIcon(QPixmap.fromImage(img)))

    def _thumbnails_done(self, generation: int) -> None:
        if generation == self._generation:
            self._thumbs = None

    @staticmethod
    def _summary(task: TaskResult | None, note: str) -> str:
        if task is None:
            return note or EMPTY_TEXT
        flipped = sum(o.flipped for o in task.outcomes)
        warn = "".join(f"<br><b style='color:{FLIP_COLOR}'>⚠ {w}</b>" for w in task.warnings)
        if task.kind != "classification":
            figures = task.regression.summary() if task.regression is not None else ""
            return (f"{task.num_samples} samples of a regression output ({figures}), largest RMSE first. "
                    f"Select one to see its layerwise error.{warn}")
        return (
            f"{task.num_samples} samples, <b>{flipped} flipped</b> (float decides, quantized decides another class or is tied), listed first; "
            f"then by lowest output SQNR. Select a sample to re-run it alone and see its layerwise error.{warn}"
        )

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)

    def _selection_changed(self) -> None:
        rows = self.table.selectionModel().selectedRows()
        if rows:
            self.sample_selected.emit(self.rows[rows[0].row()].index)
