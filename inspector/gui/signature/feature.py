"""The signature choice of the main window, installed by `install_signatures(window)`:

a `SignatureChooser` at the top of the comparison's inputs (shown when the open models have
several signatures, or an input with a dynamic dimension). Choosing one sets `CompareOptions.signature` in the `AppState` (so sessions
save it); the state re-views both models through it, so the op tables, pairing, comparison, op
math and requantize calibration address that signature's subgraph. A running comparison of the
previous signature is cancelled.
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.tflite.signatures import entry_info
from inspector.gui.compare.inputs_panel import InputsPanel
from inspector.gui.signature.signature_chooser import SignatureChooser


class SignatureFeatures(QObject):
    def __init__(self, window, inputs: InputsPanel | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.controller = c = window.controller
        self.state = c.state
        self.chooser = SignatureChooser()
        (inputs or window.compare_features.inputs).add_header(self.chooser)
        self.chooser.signature_chosen.connect(c.set_signature)
        c.models_changed.connect(self.refresh)
        c.signature_changed.connect(self._changed)
        self.refresh()

    def refresh(self) -> None:
        m = self.state.models["B"] or self.state.models["A"]
        entry = entry_info(m) if m is not None else None
        self.chooser.set_choices(self.state.signature_choices(), self.state.options.signature, entry)

    def _changed(self, key: str | None) -> None:
        w = self.window
        w.compare.cancel()  # its result would be for the previous signature's ops
        self.refresh()
        if self.state.signature_note:
            w.statusBar().showMessage(self.state.signature_note, 10000)
        else:
            m = self.state.models["B"] or self.state.models["A"]
            where = f" (subgraph {m.main.index})" if m is not None else ""
            w.statusBar().showMessage(f"Comparing signature '{key}'{where}" if key else "Comparing subgraph 0", 8000)
        w.review.update_audit()
        w.review.session.autosave()


def install_signatures(window, inputs: InputsPanel | None = None) -> SignatureFeatures:
    """Add the signature chooser above the comparison's `inputs` panel (after the comparison and
    review features)."""
    window.signature_features = SignatureFeatures(window, inputs)
    return window.signature_features
