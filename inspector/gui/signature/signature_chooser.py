"""The signature chooser above the comparison's inputs: which entry point (prefill, decode, ...)
of a model with several signatures is compared, with that signature's inputs and their shapes.
The choice is hidden for a model with one signature or none; the inputs still show when one has a
dynamic dimension besides the batch (shape signature '?', run with the samples' shape). Renders `SignatureInfo`s;
chooses nothing itself."""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QFormLayout, QLabel, QVBoxLayout, QWidget

from inspector.core.tflite.signatures import SignatureInfo, has_dynamic_inputs
from inspector.gui.binding import quietly


def shape_text(shape: tuple[int, ...]) -> str:
    """1×8×16; a dynamic dimension (-1) shows as '?'."""
    return "×".join(str(d) if d >= 0 else "?" for d in shape) if shape else "scalar"


def inputs_text(info: SignatureInfo) -> str:
    """One line per input: name, shape signature, dtype; a note when a dimension is dynamic."""
    lines = [f"{name}: {shape_text(shape)} {dtype}" for name, shape, dtype in info.inputs]
    if has_dynamic_inputs(info):
        lines.append("? = dynamic: resized to the samples' shape")
    return "\n".join(lines) if lines else "no inputs"


class SignatureChooser(QWidget):
    signature_chosen = Signal(object)  # key | None (subgraph 0)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.combo = QComboBox()
        self.combo.setToolTip("The signature (entry point) to compare: its subgraph, inputs and outputs. "
                              "The op tables, the comparison and requantize calibration use it.")
        self.details = QLabel()
        self.details.setWordWrap(True)
        form = QFormLayout()
        form.setContentsMargins(0, 0, 0, 0)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.combo_label = QLabel("Signature")
        self.details_label = QLabel("")
        form.addRow(self.combo_label, self.combo)
        form.addRow(self.details_label, self.details)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 4)
        lay.addLayout(form)
        self.infos: tuple[SignatureInfo, ...] = ()
        self.entry: SignatureInfo | None = None  # what runs when there is nothing to choose
        self.combo.currentIndexChanged.connect(self._chosen)
        self.hide()

    def set_choices(self, infos: tuple[SignatureInfo, ...], current: str | None, entry: SignatureInfo | None = None) -> None:
        """The signatures offered and the chosen one (None: subgraph 0's, or 'subgraph 0');
        `entry`: the inputs that run, shown alone when there is no choice but a dynamic input."""
        with quietly(self.combo):  # showing the state's choice, not choosing
            self.infos, self.entry = tuple(infos), entry
            self.combo.clear()
            if not any(i.subgraph == 0 for i in self.infos):
                self.combo.addItem("subgraph 0 (no signature)", None)
            for i in self.infos:
                self.combo.addItem(f"{i.key}  (subgraph {i.subgraph})", i.key)
            at = self.combo.findData(current) if current is not None else -1
            if at < 0:
                at = next((k for k in range(self.combo.count()) if (info := self._info(k)) is None or info.subgraph == 0), 0)
            self.combo.setCurrentIndex(at)
        self._show_details()
        choice = len(self.infos) > 1
        for w in (self.combo_label, self.combo):
            w.setVisible(choice)
        self.details_label.setText("" if choice else "Inputs")
        self.setVisible(choice or (entry is not None and has_dynamic_inputs(entry, beyond_batch=True)))

    def current_key(self) -> str | None:
        return self.combo.currentData()

    def _info(self, index: int) -> SignatureInfo | None:
        key = self.combo.itemData(index)
        return next((i for i in self.infos if i.key == key), None)

    def _show_details(self) -> None:
        info = self._info(self.combo.currentIndex()) if len(self.infos) > 1 else self.entry
        self.details.setText(inputs_text(info) if info is not None else "subgraph 0 as the file stores it")

    def _chosen(self, index: int) -> None:
        self._show_details()
        if index >= 0:
            self.signature_chosen.emit(self.combo.itemData(index))
