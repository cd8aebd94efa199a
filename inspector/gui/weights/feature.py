"""The weights feature (`WeightsFeature(controller, ui)`, composed by the main window first, so
its tabs lead): the Weights tab (A's and B's weights of the selected op, error per channel) and
the Per-channel quantization tab (the selected quantized tensor's scales and zero points).
The numbers come from the controller's weight analysis (`core.compare.weights`); a selected op
without weights says what its constants are instead (`core.viewdata.weight_view.no_weights_text`)."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.compare.weights import WeightAnalysis, layer_weights
from inspector.core.tflite.model import Tensor
from inspector.core.viewdata.weight_view import no_weights_text
from inspector.gui.protocols import ModelsController
from inspector.gui.ui_services import UiServices
from inspector.gui.weights.per_channel_view import PerChannelView
from inspector.gui.weights.weight_histogram import WeightHistogramView


class WeightsFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices) -> None:
        super().__init__(ui.parent)
        self.weights_view = WeightHistogramView()
        self.per_channel_view = PerChannelView()
        ui.add_tab("Weights", self.weights_view)
        ui.add_tab("Per-channel quantization", self.per_channel_view)
        self.controller = controller
        controller.weights_changed.connect(self._weights_changed)
        controller.quantization_changed.connect(self._quantization_changed)
        self.weights_view.channel_requested.connect(controller.set_channel)

    def _quantization_changed(self, info: tuple[str, Tensor] | None) -> None:
        label, tensor = info if info is not None else ("", None)
        self.per_channel_view.set_tensor(tensor, label)

    def _weights_changed(self, analysis: WeightAnalysis | None) -> None:
        self.weights_view.set_analysis(analysis)
        if analysis is None:
            self.weights_view.set_empty_text(self._no_weights())

    def _no_weights(self) -> str | None:
        """What the selected op's constants are, when it is an op without weights (None: the usual hint)."""
        sel = self.controller.selection
        for slot in (sel.origin, "B" if sel.origin == "A" else "A"):
            model, op = self.controller.models[slot], sel.op(slot)
            if model is not None and op is not None and 0 <= op < len(model.main.ops):
                if layer_weights(model.main, model.main.ops[op]) is None:
                    return no_weights_text(model, op)
                return None
        return None
