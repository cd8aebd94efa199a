"""What a feature is given, as `typing.Protocol`s: the type checker holds every feature to these
instead of to the concrete classes that happen to provide them (a test can pass a stand-in).

- `OptionsModel`: options by name with one setter and a change signal (`CompareController` over
  `AppState`); what `gui.binding.Binder` binds widgets to.
- `ModelsController`: the models-and-selection controller every feature is built with
  (`gui.models.controller.Controller`): the state, the open models, the selection and their
  relayed signals.
- The collaborators features call, each as what its callers use: `Comparison` (the compare
  controller), `ResultSource` (the comparison source), `InputsHost` (the compare feature's
  intents), `OpMathShown` (the op math feature), `Parity`, `VersionsShown`, `PlanRunner`, `VersionsKeeper`,
  `SessionRestoring`, `Audit`.
What a feature may use of the window is `gui.ui_services.UiServices` itself (already narrow).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QWidget

if TYPE_CHECKING:
    from pathlib import Path

    from inspector.core.compare.comparison import CompareOptions
    from inspector.core.compare.pairing import Pairing
    from inspector.core.compare.parity_result import RuntimeParityResult
    from inspector.core.compare.result import ComparisonResult
    from inspector.core.quantmath.opmath_types import OpMath
    from inspector.core.requantize.plan import Plan
    from inspector.core.requantize.surgical_plan import SurgicalPlan
    from inspector.core.review.audit import Finding
    from inspector.core.state.app_state import AppState, Selection
    from inspector.core.state.versions import Version
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
    def weights_changed(self) -> SignalInstance: ...  # (WeightAnalysis | None)
    @property
    def quantization_changed(self) -> SignalInstance: ...  # ((label, Tensor) | None)
    @property
    def error(self) -> SignalInstance: ...  # (message): any other user-facing error
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
    def is_loading(self, slot: str) -> bool: ...
    def swap_models(self) -> None: ...
    def set_signature(self, key: str | None) -> None: ...
    def select_op(self, slot: str, index: int, tensor: int | None = None) -> None: ...
    def select_tensor(self, slot: str, index: int) -> None: ...
    def set_channel(self, channel: int | None) -> None: ...
    def selected_tensor(self, slot: str) -> Tensor | None: ...
    def counterpart_op(self, slot: str, index: int) -> int | None: ...
    def run_task(self, worker: Worker, description: str) -> Worker: ...


class Comparison(Protocol):
    """The comparison of the open pair (`gui.compare.controller.CompareController`)."""

    @property
    def state(self) -> AppState: ...
    @property
    def result_changed(self) -> SignalInstance: ...  # (ComparisonResult | None)
    @property
    def baseline_changed(self) -> SignalInstance: ...  # (ComparisonResult | None)
    @property
    def options_changed(self) -> SignalInstance: ...  # (CompareOptions)
    @property
    def started(self) -> SignalInstance: ...
    @property
    def progress(self) -> SignalInstance: ...  # (fraction, -1: busy; step text)
    @property
    def finished(self) -> SignalInstance: ...
    @property
    def failed(self) -> SignalInstance: ...  # (message)
    @property
    def result(self) -> ComparisonResult | None: ...
    @property
    def options(self) -> CompareOptions: ...
    @property
    def run_options(self) -> CompareOptions | None: ...
    @property
    def baseline(self) -> ComparisonResult | None: ...
    @property
    def baseline_label(self) -> str: ...
    @property
    def running(self) -> bool: ...
    @property
    def running_paths(self) -> tuple[str, str] | None: ...

    def set_options(self, options: CompareOptions) -> None: ...
    def set_result(self, result: ComparisonResult | None, run_options: CompareOptions | None = None) -> None: ...
    def set_baseline(self, result: ComparisonResult | None, label: str = "baseline") -> None: ...
    def clear_baseline(self) -> None: ...
    def run(self, options: CompareOptions | None = None, *, paths: tuple[str, str] | None = None) -> Worker | None: ...
    def paths(self) -> tuple[str, str] | None: ...


class ResultSource(Protocol):
    """The comparison other features read (`gui.compare.source.ComparisonSource`)."""

    @property
    def changed(self) -> SignalInstance: ...

    def result(self) -> ComparisonResult | None: ...
    def set_result(self, result: ComparisonResult | None) -> None: ...


class InputsHost(Protocol):
    """The compare feature's intents for its collaborators (`CompareFeature`)."""

    def add_inputs_header(self, widget: QWidget) -> None: ...
    def show_inputs_note(self, text: str) -> None: ...
    def choose_sample_file(self) -> None: ...
    def show_page(self) -> None: ...
    def show_summary_hint(self, text: str) -> None: ...


Section = tuple[str, list[str], list[list[str]], list[str], str, str]  # caption, headers, rows, tips, text, note


class OpMathShown(Protocol):
    """The op math shown (`OpMathFeature`), for a feature that adds a section under it."""

    @property
    def op_math_updated(self) -> SignalInstance: ...  # (OpMath | None)

    def current_math(self) -> OpMath | None: ...
    def set_section(self, section: Section | None) -> None: ...


class Parity(Protocol):
    """The runtime parity of B (`gui.parity.controller.ParityController`)."""

    @property
    def result_changed(self) -> SignalInstance: ...  # (RuntimeParityResult | None)
    @property
    def result(self) -> RuntimeParityResult | None: ...


class VersionsShown(Protocol):
    """The versions of B changing (`RequantizeController`'s relayed `versions_changed`)."""

    @property
    def versions_changed(self) -> SignalInstance: ...  # (): list, current or reference


class RequantizeRuns(Protocol):
    """What a requantize run tells (`RequantizeController`)."""

    @property
    def finished(self) -> SignalInstance: ...  # (Version): the new version, its comparison in
    @property
    def failed(self) -> SignalInstance: ...  # (message)


class PlanRunner(Protocol):
    """The requantize feature's intents (`RequantizeFeature`): queue a plan in its tab and run
    it, say how it went; `rq`: what its runs tell."""

    @property
    def rq(self) -> RequantizeRuns: ...

    def apply_plan(self, plan: Plan | SurgicalPlan) -> Worker | None: ...
    def revert_to(self, path: str) -> None: ...
    def say(self, text: str) -> None: ...


class VersionsKeeper(Protocol):
    """The versions of B (`RequantizeController`), for a session restoring them."""

    def restore_versions(self, versions: list[Version], current: int | None, reference: int | None,
                         missing: list[str]) -> None: ...


class SessionRestoring(Protocol):
    """Whether a session is being restored (`SessionFeature`)."""

    @property
    def restoring(self) -> bool: ...


class Audit(Protocol):
    """The audit's findings (`ReviewFeature`)."""

    @property
    def audit_updated(self) -> SignalInstance: ...  # (list[Finding] | None)
    @property
    def findings(self) -> list[Finding] | None: ...
