"""The comparison's inputs: sample source, count, seed, runtime, isolated error; Run / Cancel
with a progress bar. `bind(model)` binds each widget to one field of the state's options
(`gui.binding`: a `CompareOptions` field or one of its `SampleSettings`): an edit sets that field
alone, so options the panel does not show (threads, task kind, kept values, signature) are never
reset by it, and a change of the state shows in the widget. `field_edited` tells, after the state
holds it, that the user edited a field. Runs nothing."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings
from inspector.gui.binding import Binder
from inspector.gui.protocols import OptionsModel
from inspector.gui.views.run_row import RunRow
from inspector.gui.views.sizing import ElidedLineEdit

SOURCES = (("random", "Random (from each input's range)"), ("file", ".npy / .npz file"), ("folder", "Image folder"))
ISOLATED_LABEL = "own (isolated) error per layer"
NORMALIZATIONS = (("", "model metadata, else [-1, 1]"), ("-1,1", "[-1, 1]"), ("0,1", "[0, 1]"), ("0,255", "[0, 255]"))


class InputsPanel(QWidget):
    run_requested = Signal(object)  # CompareOptions
    field_edited = Signal(str, object)  # field name, value: the user edited it and the state holds it
    cancel_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.last_dir = ""
        self.binder: Binder | None = None  # the widgets bound to the state's options (`bind`)
        self.source = QComboBox()
        for key, text in SOURCES:
            self.source.addItem(text, key)
        self.path = ElidedLineEdit()  # a long path cut in the middle while not edited, whole in its tooltip
        self.path.setPlaceholderText("file or folder")
        self.browse = QToolButton()
        self.browse.setText("…")
        self.browse.setToolTip("Choose the sample file or image folder")
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
        self.isolated = QCheckBox(ISOLATED_LABEL)
        self.isolated.setChecked(CompareOptions.isolated)
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

        self._column = lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(form)
        lay.addWidget(self.run_row)
        lay.addStretch(1)
        self.source.currentIndexChanged.connect(self._source_changed)
        self._source_changed()
        self._count_chosen = False  # the user set Count (a file chosen later then keeps it)
        self.count.valueChanged.connect(lambda _v: setattr(self, "_count_chosen", True))

    def bind(self, model: OptionsModel) -> Binder:
        """Bind every widget to its field of `model`'s options, both ways (the widgets show the
        model's values from now on)."""
        b = self.binder = Binder(model, self)
        edited = {name: (lambda v, n=name: self.field_edited.emit(n, v))
                  for name in ("source", "count", "seed", "normalization", "runtime", "isolated")}
        b.bind("source", (self.source.currentIndexChanged, self.path.editingFinished), self.pending_source,
               self._show_source, edited["source"])
        b.bind("count", self.count.valueChanged, lambda: self.count.value() or ALL, self._show_count, edited["count"])
        b.spin(self.seed, "seed", edited["seed"])
        b.bind("normalization", self.normalization.currentIndexChanged, lambda: self.normalization.currentData() or None,
               self._show_normalization, edited["normalization"])
        b.combo(self.runtime, "runtime", edited["runtime"])
        b.check(self.isolated, "isolated", edited["isolated"])
        return b

    def add_header(self, widget: QWidget) -> None:
        """A widget above the form (the signature chooser)."""
        self._column.insertWidget(0, widget)

    def commit(self) -> None:
        """Set what the widgets show and the state does not hold yet (a path typed but not
        committed with Enter) before a run."""
        if self.binder is not None:
            self.binder.commit()

    def pending_source(self) -> str | None:
        """The sample source the widgets show (a path typed but not yet committed included)."""
        return (self.path.text().strip() or None) if self.source.currentData() != "random" else None

    # ------------------------------------------------------------------ options
    def options(self) -> CompareOptions:
        signature = self.binder.model.option("signature") if self.binder is not None else None
        return CompareOptions(
            samples=self.sample_settings(),
            runtime=self.runtime.currentData(),
            isolated=self.isolated.isChecked(),
            signature=signature if isinstance(signature, str) else None,
        )

    def sample_settings(self) -> SampleSettings:
        return SampleSettings(
            count=self.count.value() or ALL,
            seed=self.seed.value(),
            source=self.pending_source(),
            normalization=self.normalization.currentData() or None,
        )

    def set_options(self, o: CompareOptions) -> None:
        """Show `o`'s sample settings, runtime and isolated error in the widgets (bound: the state
        takes each field that differs, as from the user's edit)."""
        s = o.samples
        self._show_source(s.source)
        self._show_count(s.count)
        self.seed.setValue(s.seed)
        self.runtime.setCurrentIndex(max(0, self.runtime.findData(o.runtime)))
        self._show_normalization(s.normalization)
        self.isolated.setChecked(o.isolated)
        self.commit()

    def _show_source(self, source: object) -> None:
        text = source if isinstance(source, str) else ""
        kind = "random" if not text else ("folder" if Path(text).is_dir() else "file")
        self.path.setText(text)  # before the kind: a bound combo's change reads the path
        self.source.setCurrentIndex(self.source.findData(kind))

    def _show_count(self, count: object) -> None:
        self.count.setValue(count if isinstance(count, int) else 0)  # ALL (None) shows as 0, "all"
        self._count_chosen = count is not ALL and count != DEFAULT_COUNT

    def _show_normalization(self, normalization: object) -> None:
        key = normalization if isinstance(normalization, str) else ""
        i = self.normalization.findData(key)
        if i < 0:
            self.normalization.addItem(key, key)
            i = self.normalization.count() - 1
        self.normalization.setCurrentIndex(i)

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
        self._column.removeWidget(self.run_row)
        return self.run_row

    def set_running(self, running: bool, text: str = "") -> None:
        self.run_row.set_running(running, text)

    def set_progress(self, fraction: float, text: str) -> None:
        self.run_row.set_progress(fraction, text)
