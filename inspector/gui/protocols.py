"""What a feature is given, as `typing.Protocol`s: the type checker holds every feature to these
instead of to the concrete classes that happen to provide them (a test can pass a stand-in).

- `OptionsModel`: options by name with one setter and a change signal (`CompareController` over
  `AppState`); what `gui.binding.Binder` binds widgets to.
- `ModelsController`: the models-and-selection controller every feature is built with
  (`gui.models.controller.Controller`): the state, the open models, the selection and their
  relayed signals.
What a feature may use of the window is `gui.ui_services.UiServices` itself (already narrow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import SignalInstance

if TYPE_CHECKING:
    from pathlib import Path

    from inspector.core.compare.pairing import Pairing
    from inspector.core.state.app_state import AppState, Selection
    from inspector.core.tflite.model import Model, Subgraph, Tensor
    from inspector.gui.workers import Worker


class OptionsModel(Protocol):
    """Options by name (a `CompareOptions` field or a `SampleSettings` one) with one setter."""

    @property
    def options_changed(self) -> SignalInstance: ...

    def option(self, name: str) -> object: ...

    def set_option(self, name: str, value: object) -> None: ...


class ModelsController(Protocol):
    """The models-and-selection controller (its Qt signals relay `AppState`'s events)."""

    @property
    def state(self) -> AppState: ...
    @property
    def slot_changed(self) -> SignalInstance: ...  # (slot): AppState.slot_changed
    @property
    def pair_changed(self) -> SignalInstance: ...  # (): AppState.pair_changed
    @property
    def selection_changed(self) -> SignalInstance: ...  # (Selection)
    @property
    def signature_changed(self) -> SignalInstance: ...  # (key | None)
    @property
    def models(self) -> dict[str, Model | None]: ...
    @property
    def pairing(self) -> Pairing | None: ...
    @property
    def selection(self) -> Selection: ...
    @property
    def channel(self) -> int | None: ...

    def subgraph(self, slot: str) -> Subgraph | None: ...
    def open_model(self, slot: str, path: str | Path, background: bool = True) -> Worker: ...
    def close_model(self, slot: str) -> None: ...
    def swap_models(self) -> None: ...
    def set_signature(self, key: str | None) -> None: ...
    def select_op(self, slot: str, index: int, tensor: int | None = None) -> None: ...
    def select_tensor(self, slot: str, index: int) -> None: ...
    def selected_tensor(self, slot: str) -> Tensor | None: ...
    def counterpart_op(self, slot: str, index: int) -> int | None: ...
    def run_task(self, worker: Worker, description: str) -> Worker: ...
