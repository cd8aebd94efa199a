"""Trust what you see (`PairFeature(controller, ui, compare, compare_features)`, composed by the main window):

- Pair check: once both models are open, `core.compare.pair_check.check_pair` runs in a worker
  (weights only, no interpreter). A pair opened the wrong way round (A quantized, B float) is
  swapped in the state, so "A · float reference" is the float file and the audit and the runs
  measure the quantized one, with a note in the pair banner; a pair that is not twins gets a
  warning with the figures (share of weights that disagree, step errors, pairing coverage); a
  pair whose weights could not be compared at all says it is not verified; a true twin shows
  nothing.
- Random inputs: a banner while the shown comparison ran on random data, with a button to
  choose real samples; gone once a result comes from real inputs.
- The inputs chosen for a pair are remembered and restored (`inputs_memory`); the bundled
  example opens with its bundled inputs.
- A pair the check finds related is remembered for File › Open recent (`RecentFiles.add_pair`),
  so the list never offers a mismatched pair met on the way (the new A with the old B).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction

from inspector.core.compare.pair_check import PairCheck, check_pair
from inspector.core.compare.result import ComparisonResult
from inspector.core.state.app_state import same_file
from inspector.gui.pair.inputs_memory import InputsMemory
from inspector.gui.protocols import Comparison, InputsHost, ModelsController
from inspector.gui.ui_services import UiServices
from inspector.gui.views.status import NoticeBanner
from inspector.gui.workers import Worker, guarded
from inspector.paths import example_pair

RANDOM_TEXT = ("These results come from random inputs: accuracy, top-1 agreement, clipping and the layer errors "
               "say little about real data. Choose real samples (a .npy / .npz file or an image folder).")


def swap_note(check: PairCheck, float_name: str, quant_name: str) -> str:
    return (f"Models swapped: {quant_name} was opened as A but is the quantized model ({check.a_quantized_tensors} "
            f"quantized tensors) and {float_name} is the float one. A · float reference is now {float_name}; "
            f"B (measured and audited) is {quant_name}.")


def pair_warning(check: PairCheck) -> str:
    """The not-twins / edited-weights warning with its figures ('' for a sound pair)."""
    reasons = [r for r in check.reasons if not r.endswith(": swapped")]
    if not reasons and check.note:
        return (f"Pair not verified: {check.note[:1].upper() + check.note[1:]}. Results may compare different "
                "models without a warning.")
    if not reasons:
        return ""
    figures = [f"pairing covers {check.op_coverage:.0%} of B's ops and {check.float_op_coverage:.0%} of A's"]
    if check.max_step_error is not None:
        unit = "float16 ulps" if check.error_unit == "float16 ulps" else "steps of B"
        figures.append(f"{check.weights_compared} weight tensors, {check.elements_compared:,} weights compared, "
                       f"the furthest {check.max_step_error:.0f} {unit} away")
    head = ("Not a float model and its quantized twin: " if not check.related
            else "Some weights of B do not match the float model: ")
    tail = " Results for this pair compare different models." if not check.related else ""
    figs = "; ".join(figures)
    return head + "; ".join(reasons) + ". " + figs[:1].upper() + figs[1:] + "." + tail


class PairChecker(QObject):
    """Runs the pair check whenever the open pair changes; swaps a reversed pair back."""

    checked = Signal(object, str)  # PairCheck | None, note about a swap ('' if none)

    def __init__(self, controller: ModelsController, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.check: PairCheck | None = None
        self.note = ""
        self._key: tuple | None = None
        self._swapped_key: tuple | None = None
        self.worker: Worker | None = None
        controller.pair_changed.connect(self.run)

    def _pair_key(self) -> tuple | None:
        a, b = self.controller.models["A"], self.controller.models["B"]
        return None if a is None or b is None else (id(a), id(b))

    def run(self) -> None:
        key = self._pair_key()
        if key == self._key:
            return
        self._key = key
        if self.worker is not None:
            self.worker.cancel()
            self.worker = None
        if key is None:
            self.check, self.note = None, ""
            self.checked.emit(None, "")
            return
        c = self.controller
        w = Worker(check_pair, c.models["A"], c.models["B"], c.state.pairing)
        self.worker = w
        w.finished.connect(guarded(self, lambda r: self._checked(w, key, r)))
        w.failed.connect(guarded(self, lambda msg: self._failed(w, msg)))
        c.run_task(w, "Checking the pair")

    def _failed(self, w: Worker, msg: str) -> None:
        if w is self.worker:
            self.worker = None
            self.controller.error.emit(f"Pair check failed: {msg}")

    def _checked(self, w: Worker, key: tuple, check: PairCheck) -> None:
        if w is not self.worker or key != self._pair_key():
            return  # the pair changed meanwhile
        self.worker = None
        c = self.controller
        if check.swapped:
            a, b = c.models["A"], c.models["B"]
            assert a is not None and b is not None, "a pair was checked"
            note = swap_note(check, Path(b.path).name, Path(a.path).name)
            self._swapped_key = (id(b), id(a))
            self.note = note
            c.swap_models()  # pair_changed -> run() checks the pair the right way round
            return
        if key != self._swapped_key:
            self.note = ""
        self.check = check
        self.checked.emit(check, self.note)


class PairFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices, compare: Comparison, compare_features: InputsHost) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.compare = compare
        self.features = compare_features  # the inputs panel and its tab, through its intents
        self.checker = PairChecker(controller, self)
        self.memory = InputsMemory(ui.settings, controller.state, self)
        self.pair_banner = NoticeBanner("warning", "pairBanner")
        self.random_banner = NoticeBanner("info", "randomBanner", "Choose samples…")
        ui.add_strip(self.pair_banner, self.random_banner)
        self.checker.checked.connect(self._pair_checked)
        controller.pair_changed.connect(self.memory.pair_changed)
        self.memory.note.connect(compare_features.show_inputs_note)
        compare.result_changed.connect(self._result_changed)
        self.random_banner.button().clicked.connect(self.choose_samples)
        self.act_example = QAction("Open the &example pair", ui.parent)
        self.act_example.setToolTip("The bundled float + int8 example, with its inputs and labels")
        self.act_example.triggered.connect(self.open_example)
        ui.insert_actions("File", "recent", [self.act_example])

    def open_example(self) -> list:
        """Open the bundled example pair (its bundled inputs are selected on its first run)."""
        return self.ui.open_files([str(p) for p in example_pair()], "A")

    def _pair_checked(self, check: PairCheck | None, note: str) -> None:
        a, b = self.checker.controller.models["A"], self.checker.controller.models["B"]
        if check is not None and check.related and a is not None and b is not None:
            self.ui.recent.add_pair(a.path, b.path)  # File › Open recent lists twins, never a mismatched pair met on the way
        parts = [note] if note else []
        if check is not None and (w := pair_warning(check)):
            parts.append(w)
        if parts:
            self.pair_banner.show_message("\n".join(parts))
        else:
            self.pair_banner.hide()

    def _result_changed(self, result: ComparisonResult | None) -> None:
        state = self.memory.state
        paths, ran_with = state.paths(), state.run_options
        if (result is not None and paths is not None and ran_with is not None and ran_with.samples == state.samples
                and same_file(result.float_path, paths[0]) and same_file(result.quant_path, paths[1])):
            self.memory.ran(result.samples)  # the pair opened again says how many its last run used
        if result is not None and result.samples_are_random:
            self.random_banner.show_message(RANDOM_TEXT)
        elif result is not None or paths is None:
            self.random_banner.hide()
        # else: the open pair's comparison was dropped for the next one (a new version of B): the
        # notice stays until that result says (it came and went with each Apply fix, moving the
        # panes twice and laying the window out again)

    def choose_samples(self) -> None:
        """Show the inputs panel with the file source chosen and open its file chooser."""
        self.features.choose_sample_file()
