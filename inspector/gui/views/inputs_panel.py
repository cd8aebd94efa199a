"""The comparison's inputs: sample source, count, seed, runtime, isolated error; Run / Cancel
with a progress bar. Produces a `CompareOptions`; runs nothing itself."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare import CompareOptions

SOURCES = (("random", "Random (from each input's range)"), ("file", ".npy / .npz file"), ("folder", "Image folder"))
NORMALIZATIONS = (("", "model metadata, else [-1, 1]"), ("-1,1", "[-1, 1]"), ("0,1", "[0, 1]"), ("0,255", "[0, 255]"))


class InputsPanel(QWidget):
    run_requested = Signal(object)  # CompareOptions
    cancel_requested = Signal()

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.last_dir = ""
        self.source = QComboBox()
        for key, text in SOURCES:
            self.source.addItem(text, key)
        self.path = QLineEdit()
        self.path.setPlaceholderText("file or folder")
        self.browse = QToolButton(text="…", toolTip="Choose the sample file or image folder")
        self.browse.clicked.connect(self.choose_path)
        path_row = QHBoxLayout()
        path_row.setContentsMargins(0, 0, 0, 0)
        path_row.addWidget(self.path, 1)
        path_row.addWidget(self.browse)
        self.count = QSpinBox(minimum=0, maximum=1_000_000, value=8)
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
        self.isolated = QCheckBox("isolated error per layer")
        self.isolated.setToolTip("Also run each float op on the dequantized inputs the quantized op saw")

        form = QFormLayout()
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.addRow("Samples from", self.source)
        form.addRow("", path_row)
        form.addRow("Count", self.count)
        form.addRow("Seed", self.seed)
        form.addRow("Runtime", self.runtime)
        form.addRow("Images", self.normalization)
        form.addRow("", self.isolated)

        self.run_button = QPushButton("Run comparison")
        self.run_button.setToolTip("Run both models on the samples and measure every layer's error (Ctrl+R)")
        self.run_button.setDefault(True)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.run_button.clicked.connect(lambda: self.run_requested.emit(self.options()))
        self.cancel_button.clicked.connect(self.cancel_requested.emit)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button, 1)
        buttons.addWidget(self.cancel_button)
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setValue(0)
        self.bar.setTextVisible(False)
        self.status = QLabel("Not run yet.")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addLayout(buttons)
        lay.addWidget(self.bar)
        lay.addWidget(self.status)
        lay.addStretch(1)
        self.source.currentIndexChanged.connect(self._source_changed)
        self._source_changed()

    # ------------------------------------------------------------------ options
    def options(self) -> CompareOptions:
        kind = self.source.currentData()
        path = (self.path.text().strip() or None) if kind != "random" else None
        count = self.count.value() or None
        return CompareOptions(
            samples=count,
            seed=self.seed.value(),
            inputs=path,
            runtime=self.runtime.currentData(),
            isolated=self.isolated.isChecked(),
            normalization=self.normalization.currentData() or None,
        )

    def set_options(self, o: CompareOptions) -> None:
        kind = "random" if not o.inputs else ("folder" if Path(o.inputs).is_dir() else "file")
        self.source.setCurrentIndex(self.source.findData(kind))
        self.path.setText(o.inputs or "")
        self.count.setValue(o.samples or 0)
        self.seed.setValue(o.seed)
        self.runtime.setCurrentIndex(max(0, self.runtime.findData(o.runtime)))
        i = self.normalization.findData(o.normalization or "")
        if i < 0:
            self.normalization.addItem(o.normalization or "", o.normalization or "")
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
            self.path.setText(p)
            self.last_dir = str(Path(p).parent)

    def _source_changed(self) -> None:
        kind = self.source.currentData()
        for w in (self.path, self.browse):
            w.setEnabled(kind != "random")
        self.normalization.setEnabled(kind == "folder")

    # ------------------------------------------------------------------ run state
    def set_running(self, running: bool, text: str = "") -> None:
        self.run_button.setEnabled(not running)
        self.cancel_button.setEnabled(running)
        if running:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(0)
        if text:
            self.status.setText(text)

    def set_progress(self, fraction: float, text: str) -> None:
        if fraction < 0:
            self.bar.setRange(0, 0)
        else:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * fraction))
        if text:
            self.status.setText(text)
