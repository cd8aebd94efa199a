"""The weights feature (`WeightsFeature(controller, ui)`, composed by the main window first, so
its tabs lead): the Weights tab (A's and B's weights of the selected op, error per channel) and
the Per-channel quantization tab (the selected quantized tensor's scales and zero points).
The numbers come from the controller's weight analysis (`core.compare.weights`)."""

from __future__ import annotations

from PySide6.QtCore import QObject

from inspector.core.tflite.model import Tensor
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
        controller.weights_changed.connect(self.weights_view.set_analysis)
        controller.quantization_changed.connect(self._quantization_changed)
        self.weights_view.channel_requested.connect(controller.set_channel)

    def _quantization_changed(self, info: tuple[str, Tensor] | None) -> None:
        label, tensor = info if info is not None else ("", None)
        self.per_channel_view.set_tensor(tensor, label)
