"""The "Runtime parity" tab (`ParityFeature(controller, ui)`, composed by the main window): model B on
two runtimes or thread counts (the device-vs-desktop question), per layer the share of elements
that differ and the max LSB, the first divergence and the kernel that departs from the spec.
Clicking a layer selects B's op everywhere; selecting an op elsewhere highlights its layer."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.gui.parity.controller import ParityController
from inspector.gui.parity.parity_view import ParityView
from inspector.gui.protocols import ModelsController
from inspector.gui.relay import on_event
from inspector.gui.ui_services import UiServices


class ParityFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        c = self.controller_main = controller
        self.controller = pc = ParityController(c, self)
        self.view = view = ParityView()
        ui.add_tab("Runtime parity", view)
        view.run_requested.connect(lambda rts, ths: pc.run(pc.parity_options(rts, ths)))
        view.cancel_requested.connect(pc.cancel)
        view.layer_clicked.connect(lambda op: c.select_op("B", op))
        pc.started.connect(lambda: view.set_running(True, "Starting…"))
        pc.progress.connect(view.set_progress)
        pc.finished.connect(lambda: view.set_running(False))
        pc.failed.connect(self._failed)
        pc.cancelled.connect(lambda: view.run_row.status.setText("Cancelled; the previous result (if any) is still shown."))
        pc.result_changed.connect(self._result_changed)
        c.selection_changed.connect(lambda sel: view.set_selected(sel.op("B")))
        on_event(c.state.options_changed, self, lambda _o: self._samples_changed())
        self._samples_changed()

    def _samples_changed(self) -> None:
        self.view.set_samples_text(self.controller_main.state.samples.describe())

    def _result_changed(self, result: RuntimeParityResult | None) -> None:
        self.view.set_result(result)
        if result is not None:
            where = f" of signature '{result.signature}' (subgraph {result.subgraph})" if result.signature else ""
            self.view.run_row.status.setText(f"Done: {len(result.layers)} layers{where} compared, {result.inputs}.")
        else:
            self.view.run_row.status.setText("")

    def _failed(self, message: str) -> None:
        self.view.set_running(False, f"Failed: {message}")
        self.ui.show_error(f"Runtime parity failed: {message}")
