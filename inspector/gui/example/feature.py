"""A newcomer's first screen: the bundled example pair opens compared, and a pair
without a comparison says "Run" instead of "open models A and B".

When both open models are the bundled example (`inputs_memory.is_example_pair`) and its
bundled inputs are the chosen samples, the comparison starts at once, in the worker with its
progress and Cancel (the compare controller's own run), on the Layer error tab, with the isolated
error per layer (the diagnosis needs each layer's own error to name the worst layer's cause). Once per opening of the pair
(`AppState.pair_identity`: the example opened again after another pair compares again; another version of
its B is the same opening); the QSettings key `AUTORUN_KEY` (default on) turns it off. While any comparison
runs (Run, or the one after Apply fix) the summary strip says so with its progress, never "Press Run".
Composed by the main window.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import QObject, QTimer

from inspector.gui.protocols import Comparison, InputsHost, ModelsController, SessionRestoring
from inspector.gui.ui_services import UiServices
from inspector.paths import example_inputs, is_example_pair

AUTORUN_KEY = "compare/auto_run_example"
READY_TEXT = "Models A and B are open: no comparison yet. Press Run comparison (Ctrl+R) in the Layer error tab to see how much the outputs change."
EXAMPLE_TEXT = "The bundled example pair: comparing it on its bundled inputs and labels…"
RUNNING_TEXT = "Comparing {b} with {a}…"


def running_text(paths: tuple[str, str], fraction: float = -1.0, step: str = "") -> str:
    """The summary strip's line while a comparison of `paths` (A, B) runs: what is compared, how far
    (a negative fraction: busy, no figure) and the step the worker reports."""
    text = EXAMPLE_TEXT if is_example_pair(*paths) else RUNNING_TEXT.format(a=Path(paths[0]).name, b=Path(paths[1]).name)
    if fraction >= 0:
        text += f" {100 * min(fraction, 1.0):.0f} %"
    return text + (f" · {step}" if step else "") + " (Cancel in the status bar)"


class ExampleFeature(QObject):
    """Collaborators: the models controller, the window's services (settings, tabs), the compare
    controller, the compare features (the summary strip it writes its hint into, the layer-error
    page it shows) and the session controller (no auto-run while a session restores)."""

    def __init__(self, controller: ModelsController, ui: UiServices, compare: Comparison, compare_features: InputsHost,
                 session: SessionRestoring) -> None:
        super().__init__(ui.parent)
        self.ui, self.compare, self.session = ui, compare, session
        self.features = compare_features
        self._done_for: tuple[str | None, str | None] | None = None  # the opening of the example compared at once
        controller.pair_changed.connect(self._models_changed)
        compare.result_changed.connect(lambda _r: self._hint())
        compare.started.connect(self._hint)
        compare.finished.connect(self._hint)
        compare.progress.connect(self._progress)

    def enabled(self) -> bool:
        v = self.ui.settings.value(AUTORUN_KEY, True)
        return v not in (False, "false", "0", 0)

    def _models_changed(self, *_args: object) -> None:
        if self.compare.state.pair_identity() != self._done_for:
            self._done_for = None  # another pair: the example opened again is a new opening
        # after the inputs memory chose the example's samples (connected before us): next event loop turn
        QTimer.singleShot(0, self._maybe_run)
        self._hint()

    def should_run(self) -> bool:
        paths = self.compare.paths()
        if paths is None or not is_example_pair(*paths) or not self.enabled():
            return False
        if self.compare.result is not None or self.compare.running_paths == paths or self._done_for is not None:
            return False
        if self.session.restoring:
            return False  # a session is being restored: its own result (or none) is what it saved
        source = self.compare.options.samples.source
        return source is not None and Path(source).resolve() == example_inputs().resolve()

    def _maybe_run(self) -> None:
        if not self.should_run():
            return
        self._done_for = self.compare.state.pair_identity()
        if not self.compare.options.isolated:
            self.compare.set_options(dataclasses.replace(self.compare.options, isolated=True))
        self.compare.run()
        self._show_layer_error()
        self._hint()

    def _show_layer_error(self) -> None:
        """Show the run's plot instead of the empty weight histogram ("Select a layer…") that
        filled half the first screen, unless the user already chose another tab."""
        if self.ui.current_tab_index() == 0:
            self.features.show_page()

    def _hint(self, *_args: object) -> None:
        """The summary strip's hint while there is no result: 'Run' once both models are open,
        what is being compared while a comparison runs."""
        if self.compare.result is not None:
            return
        paths = self.compare.paths()
        if paths is None:
            return  # the summary's own hint: open models A and B
        running = self.compare.running_paths
        self.features.show_summary_hint(running_text(running) if running is not None else READY_TEXT)

    def _progress(self, fraction: float, step: str) -> None:
        running = self.compare.running_paths  # what runs, which may be another pair's comparison
        if self.compare.result is None and running is not None:
            self.features.show_summary_hint(running_text(running, fraction, step))
