"""The signature choice (`SignatureFeature(controller, ui, compare_features)`, composed by the
main window): a `SignatureChooser` at the top of the comparison's inputs (shown when the open models have
several signatures, or an input with a dynamic dimension). Choosing one sets `CompareOptions.signature` in the `AppState` (so sessions
save it); the state re-views both models through it, so the op tables, pairing, comparison, op
math and requantize calibration address that signature's subgraph. The features that depend on
the signature follow the controller's `signature_changed` themselves (the comparison cancels a
run of the previous signature, the audit names the new subgraph, the session autosaves).
"""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.tflite.signatures import entry_info
from inspector.gui.protocols import InputsHost, ModelsController
from inspector.gui.signature.signature_chooser import SignatureChooser
from inspector.gui.ui_services import UiServices


class SignatureFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices, compare_features: InputsHost) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.controller = c = controller
        self.state = c.state
        self.chooser = SignatureChooser()
        compare_features.add_inputs_header(self.chooser)
        self.chooser.signature_chosen.connect(c.set_signature)
        c.pair_changed.connect(self.refresh)
        c.signature_changed.connect(self._changed)
        self.refresh()

    def refresh(self) -> None:
        m = self.state.models["B"] or self.state.models["A"]
        entry = entry_info(m) if m is not None else None
        self.chooser.set_choices(self.state.signature_choices(), self.state.options.signature, entry)

    def _changed(self, key: str | None) -> None:
        self.refresh()
        if self.state.signature_note:
            self.ui.status(self.state.signature_note, 10000)
        else:
            m = self.state.models["B"] or self.state.models["A"]
            where = f" (subgraph {m.main.index})" if m is not None else ""
            self.ui.status(f"Comparing signature '{key}'{where}" if key else "Comparing subgraph 0", 8000)
