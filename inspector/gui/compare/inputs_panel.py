"""The comparison's inputs: sample source, count, seed, runtime, isolated error; Run / Cancel
with a progress bar. Each widget is bound to one field of the state's `CompareOptions` (or of
its `SampleSettings`): an edit announces that field alone (`field_edited`), so options the panel
does not show (threads, task kind, kept values, signature) are never reset by it. Runs nothing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings
from inspector.gui.views.run_row import RunRow

SOURCES = (("random", "Random (from each input's range)"), ("file", ".npy / .npz file"), ("folder", "Image folder"))
ISOLATED_LABEL = "own (isolated) error per layer"
NORMALIZATIONS = (("", "model metadata, else [-1, 1]"), ("-1,1", "[-1, 1]"), ("0,1", "[0, 1]"), ("0,255", "[0, 255]"))


class InputsPanel(QWidget):
    run_requested = Signal(object)  # CompareOptions
    field_edited = Signal(str, object)  # field name, value: a SampleSettings field or a CompareOptions one
    cancel_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.last_dir = ""
        self.signature: str | None = None  # the state's (chosen in the signature chooser), kept in options()
        self.source = QComboBox()
        for key, text in SOURCES:
            self.source.addItem(text, key)
        self.path = QLineEdit()
        self.path.setPlaceholderText("file or folder")
        self.path.textChanged.connect(self.path.setToolTip)  # the field shows the path's tail: whole in its tooltip
        self.browse = QToolButton(text="…", toolTip="Choose the sample file or image folder")
        self.browse.clicked.connect(self.choose_path)
        path_row = QHBoxLayout()
        path_row.setContentsMargins(0, 0, 0, 0)
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.browse)
        self.count = QSpinBox(minimum=0, maximum=1_000_000, value=DEFAULT_COUNT)  # 0 shows ALL
        self.count.setSpecialValueText("all")
        self.count.setToolTip("Number of samples (0 = every sample of the file or folder)")
        self.seed = QSpinBox(minimum=0, maximum=2**31 - 1, value=0)
        self.runtime = QComboBox()
        self.runtime.addItem("optimized (XNNPACK)", "optimized")
        self.runtime.addItem("reference kernels", "reference")
        self.runtime.setToolTip("Optimized and reference kernels can differ by a few quantization steps")
        self.normalization = QComboBox()
        for key, text in NORMALIZATIONS:
            self.normalization.addItem(text, key)
        self.normalization.setToolTip("How image pixels (0..255) become float inputs")
        self.isolated = QCheckBox(ISOLATED_LABEL, checked=CompareOptions.isolated)
        self.isolated.setToolTip("Each layer's own error: each float op also runs on the dequantized inputs the quantized "
                                 "op saw. The diagnosis needs it to tell a layer's own cause (bias shift, weight rounding) "
                                 "from error inherited from upstream; off, the comparison runs faster")  # fmt: skip

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Samples from", self.source)
        form.addRow("", path_row)
        form.addRow("Count", self.count)
        form.addRow("Seed", self.seed)
        form.addRow("Runtime", self.runtime)
        form.addRow("Images", self.normalization)
        form.addRow("", self.isolated)

        self.run_row = RunRow("Run comparison", bar_beside=False, status="Not run yet.")
        self.run_button, self.cancel_button = self.run_row.run_button, self.run_row.cancel_button
        self.bar, self.status = self.run_row.bar, self.run_row.status
        self.run_button.setToolTip("Run both models on the samples and measure every layer's error (Ctrl+R)")
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.options()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addWidget(self.run_row)
        lay.addStretch(1)
        self.source.currentIndexChanged.connect(self._source_changed)
        self._source_changed()
        self._setting = False
        self._count_chosen = False  # the user set Count (a file chosen later then keeps it)
        self.count.valueChanged.connect(lambda _v: self._setting or setattr(self, "_count_chosen", True))
        bindings = (
            (self.source.currentIndexChanged, "source", self.pending_source),
            (self.path.editingFinished, "source", self.pending_source),
            (self.count.valueChanged, "count", lambda: self.count.value() or ALL),
            (self.seed.valueChanged, "seed", self.seed.value),
            (self.normalization.currentIndexChanged, "normalization", lambda: self.normalization.currentData() or None),
            (self.runtime.currentIndexChanged, "runtime", self.runtime.currentData),
            (self.isolated.toggled, "isolated", self.isolated.isChecked),
        )
        for sig, name, value in bindings:
            sig.connect(lambda *_a, n=name, v=value: self._edited(n, v()))

    def add_header(self, widget: QWidget) -> None:
        """A widget above the form (the signature chooser)."""
        self.layout().insertWidget(0, widget)

    def _edited(self, name: str, value: object) -> None:
        if not self._setting:
            self.field_edited.emit(name, value)

    def fields(self) -> dict[str, object]:
        """Every field the panel shows, by name, as its widgets hold it now."""
        return {"source": self.pending_source(), "count": self.count.value() or ALL, "seed": self.seed.value(),
                "normalization": self.normalization.currentData() or None, "runtime": self.runtime.currentData(),
                "isolated": self.isolated.isChecked()}

    def pending_source(self) -> str | None:
        """The sample source the widgets show (a path typed but not yet committed included)."""
        return (self.path.text().strip() or None) if self.source.currentData() != "random" else None

    # ------------------------------------------------------------------ options
    def options(self) -> CompareOptions:
        return CompareOptions(
            samples=self.sample_settings(),
            runtime=self.runtime.currentData(),
            isolated=self.isolated.isChecked(),
            signature=self.signature,
        )

    def sample_settings(self) -> SampleSettings:
        return SampleSettings(
            count=self.count.value() or ALL,
            seed=self.seed.value(),
            source=self.pending_source(),
            normalization=self.normalization.currentData() or None,
        )

    def set_options(self, o: CompareOptions) -> None:
        self._setting = True
        try:
            self._set_options(o)
        finally:
            self._setting = False

    def _set_options(self, o: CompareOptions) -> None:
        s = o.samples
        self.signature = o.signature
        kind = "random" if not s.source else ("folder" if Path(s.source).is_dir() else "file")
        self.source.setCurrentIndex(self.source.findData(kind))
        self.path.setText(s.source or "")
        self.count.setValue(0 if s.count is ALL else s.count)
        self._count_chosen = s.count is not ALL and s.count != DEFAULT_COUNT
        self.seed.setValue(s.seed)
        self.runtime.setCurrentIndex(max(0, self.runtime.findData(o.runtime)))
        i = self.normalization.findData(s.normalization or "")
        if i < 0:
            self.normalization.addItem(s.normalization or "", s.normalization or "")
            i = self.normalization.count() - 1
        self.normalization.setCurrentIndex(i)
        self.isolated.setChecked(o.isolated)

    def choose_path(self) -> None:
        start = self.path.text() or self.last_dir
        if self.source.currentData() == "folder":
            p = QFileDialog.getExistingDirectory(self, "Image folder (one subfolder per class for labels)", start)
        else:
            p, _ = QFileDialog.getOpenFileName(self, "Sample inputs", start, "NumPy arrays (*.npy *.npz);;All files (*)")
        if p:
            if not self._count_chosen and self.count.value() == DEFAULT_COUNT:
                self.count.setValue(0)  # a file or folder chosen: all of it, unless the user set a count
                self._count_chosen = False
            self.path.setText(p)
            self.last_dir = str(Path(p).parent)

    def _source_changed(self) -> None:
        kind = self.source.currentData()
        for w in (self.path, self.browse):
            w.setEnabled(kind != "random")
        self.normalization.setEnabled(kind == "folder")

    # ------------------------------------------------------------------ run state
    def take_run_row(self) -> RunRow:
        """The Run / Cancel / progress / status row, out of this form's layout: the page pins it
        below the form's scroll area, so Run is never scrolled or cut away in a small window."""
        self.layout().removeWidget(self.run_row)
        return self.run_row

    def set_running(self, running: bool, text: str = "") -> None:
        self.run_row.set_running(running, text)

    def set_progress(self, fraction: float, text: str) -> None:
        self.run_row.set_progress(fraction, text)
