"""The Requantize tab and menu (`RequantizeFeature(controller, ui, compare)`, composed by the
main window).

Holds the `RequantizeController` (`.rq`; also the session hook) and the panel (`.panel`), and
keeps the panel in step with the models, the selection and the comparison controller it is
given. Intents for its collaborators: `apply_plan` (queue a plan and run it), `say`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from PySide6.QtCore import QObject
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.result import ComparisonResult
from inspector.core.requantize.choices import algorithms_for, logits_objective
from inspector.core.requantize.delta import db_delta, output_sqnr_db
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.suggest import SuggestResult
from inspector.core.requantize.suggest_surgical import SurgicalSuggestResult
from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.samples.holdout import MIN_HELD_OUT, split_samples
from inspector.core.state.app_state import same_file
from inspector.core.state.versions import Version
from inspector.core.viewdata.layer_series import op_errors
from inspector.core.viewdata.suggest_view import suggest_text
from inspector.gui.protocols import Comparison, ModelsController
from inspector.gui.requantize.controller import RequantizeController
from inspector.gui.requantize.requantize_panel import RequantizePanel
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker

MODEL_FILTER = "TFLite models (*.tflite);;All files (*)"
RECIPE_FILTER = "Recipe JSON (*.json);;All files (*)"


def origin_text(v: Version) -> str:
    if v.kind == "opened":
        return "the model you opened"
    if v.surgical:
        return f"{v.kind} from {Path(v.source).name} (ops {', '.join(map(str, v.edited_ops))} of it; every other op unchanged)"
    if v.kind == "recalibrated":
        return f"litert-quantizer from {Path(v.float_path).name} with no changes, calibration seeded from {Path(v.source).name}"
    return f"{v.kind} from {Path(v.float_path).name}" + (f", calibration seeded from {Path(v.source).name}" if v.source else "")


def sample_text(opts: CompareOptions) -> str:
    s = opts.samples
    count = s.random_count if s.source is None else s.count
    how = (f"from {3 * MIN_HELD_OUT} samples on, the first 2/3 calibrate and the rest are held out to measure gains; "
           "with fewer, all of them do both (gains in-sample)")
    if count is not None:
        how = split_samples(count).note
    return f"Calibration uses the comparison's samples: {s.describe()}; {how}. Change them in the Layer error tab."


def held_out_note(notes: Iterable[str]) -> str:
    """The held-out gain line of a version's notes (`gain: ...`), as a sentence; '' when none."""
    line = next((n for n in notes if n.startswith("gain: ")), "")
    return f" Gain {line[6:]}." if line else ""


class RequantizeFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices, compare: Comparison) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.controller = c = controller
        self.compare = compare
        self.rq = rq = RequantizeController(c, ui, compare)
        self.panel = p = RequantizePanel(draft=rq.flow.draft)
        ui.add_tab("Requantize", p)
        self._install_menu()
        Worker(algorithms_for, "CONV_2D").start()  # imports litert-quantizer off the GUI thread

        ed = p.editor
        ed.add_selected_requested.connect(self.add_selected)
        ed.run_requested.connect(rq.run)
        ed.cancel_requested.connect(rq.cancel)
        ed.message.connect(lambda msg: ed.status.setText(msg))
        rq.running_changed.connect(self._running)
        rq.progress.connect(ed.set_progress)
        rq.failed.connect(lambda msg: ed.status.setText(msg))
        rq.versions_changed.connect(self._versions_changed)
        rq.delta_changed.connect(p.versions.set_delta)
        rq.unchanged.connect(ed.status.setText)
        rq.finished.connect(self._finished)
        rq.suggestion_changed.connect(self._suggestion)
        rq.saved.connect(lambda path: ed.status.setText(f"Saved {path}"))
        rq.pair_left.connect(ed.status.clear)  # "done" or a failure of the old pair
        p.versions.switch_requested.connect(self.make_model_b)
        p.versions.compare_requested.connect(rq.compare_versions)
        p.suggest.suggest_requested.connect(rq.suggest)
        p.suggest.apply_requested.connect(rq.apply_suggestion)
        p.suggest.edit_requested.connect(self._edit_suggestion)
        p.save_model_requested.connect(self.choose_save_model)
        p.save_recipe_requested.connect(self.choose_save_recipe)
        p.plot.layer_clicked.connect(self._layer_clicked)
        c.selection_changed.connect(lambda sel: p.plot.set_selected(sel.op("B")))  # B's op index, as everywhere
        c.pair_changed.connect(self._models_changed)
        c.signature_changed.connect(lambda _key: self._models_changed())  # the ops of the chosen signature
        compare.result_changed.connect(self._result_changed)
        compare.baseline_changed.connect(lambda r: self.panel.plot.set_baseline(r, compare.baseline_label))
        compare.options_changed.connect(lambda _o: self._calibration_text())
        self.panel.plot.set_result(compare.result)
        self.panel.plot.set_baseline(compare.baseline, compare.baseline_label)
        self._models_changed()

    # ------------------------------------------------------------------ intents
    def _edit_suggestion(self) -> None:
        """Suggest's plan into the plan editor, to change before running it."""
        if self.rq.suggestion is not None:
            self.panel.editor.set_plan(self.rq.suggestion.plan)

    def apply_plan(self, plan: Plan | SurgicalPlan) -> Worker | None:
        """Queue `plan` in the tab's plan editor, show the tab and run it (None: not started)."""
        self.panel.editor.set_plan(plan)
        self.ui.show_tab(self.panel)
        return self.rq.run(plan)

    def revert_to(self, path: str) -> None:
        """Make the version stored at `path` model B again (a fix that made things worse, undone)."""
        i = next((v.number for v in self.rq.versions if same_file(v.path, path)), None)
        if i is not None:
            self.rq.switch_to(i)

    def say(self, text: str) -> None:
        """A message under the plan (its first line also in the status bar)."""
        self.panel.editor.status.setText(text)
        self.ui.status(text.splitlines()[0], 10000)

    # ------------------------------------------------------------------ wiring to the comparison

    def _result_changed(self, result: ComparisonResult | None) -> None:
        self.panel.plot.set_result(result)
        errs = {op: float(layer.metrics.sqnr_db) for op, layer in op_errors(result, float_side=True).items()} if result else {}
        self.panel.editor.set_errors(errs)
        self._calibration_text()
        self._versions_changed()

    def _calibration_text(self) -> None:
        self.panel.editor.set_calibration_text(sample_text(self.rq.comparison_options()))

    def _models_changed(self) -> None:
        c = self.controller
        self.panel.editor.set_float_model(c.models["A"])
        b = c.models["B"]
        self.panel.editor.set_quant_model(b if c.models["A"] is not None else None)
        self.panel.editor.set_op_maps(0 if b is None or c.models["A"] is None else len(b.main.ops),
                                      lambda i: c.counterpart_op("B", i), lambda i: c.counterpart_op("A", i))
        self._calibration_text()
        logits = logits_objective(b) if b is not None else None
        self.panel.suggest.set_logits(logits, f"op {logits[3:]}" if logits else "")

    def _versions_changed(self) -> None:
        rq, p = self.rq, self.panel
        rows = [(v.name, v.size_bytes, rq.output_sqnr(i)) for i, v in enumerate(rq.versions)]
        p.versions.set_versions(rows, rq.current, rq.reference)
        p.versions.set_baseline_reason(rq.baseline_reason())
        p.tradeoff.set_versions(rows)
        v0 = rq.version(0)
        if v0 is not None and v0.base != p.editor.property("inferred_from"):
            p.editor.setProperty("inferred_from", v0.base)
            p.editor.set_base(v0.base, "(inferred)")
            p.editor.base.setToolTip(f"Scheme for every layer not listed below; {v0.base} was inferred from {Path(v0.path).name}")
        v = rq.version(rq.current)
        if v is not None:
            p.set_notes(f"{v.name} — {origin_text(v)}\n{v.path}", v.notes)
        else:  # no pair open: nothing to describe
            p.notes.clear()
            p.middle_tabs.setTabText(p.middle_tabs.indexOf(p.notes), "Notes")
        p.save_recipe_button.setEnabled(v is not None and (bool(v.recipe) or v.surgical))

    def _running(self, running: bool, what: str) -> None:
        ed = self.panel.editor
        ed.set_running(running, f"{what}…" if running else ("Cancelled." if what == "cancelled" else ""))
        self.panel.suggest.run_button.setEnabled(not running)

    def _finished(self, v: Version) -> None:
        n = len(v.notes)
        shown = [t for t in v.notes if not t.startswith("gain: ")]  # the gain line is shown on its own
        first = f" {n} note(s) (Notes tab)" + (f", first: {shown[0]}" if shown else "") if n else ""
        ref = self.rq.version(self.rq.reference)  # the delta's 'before' (its 1,500 rows are made a turn later)
        before, after = (output_sqnr_db(ref.comparison), output_sqnr_db(v.comparison)) if ref is not None else (None, None)
        gain = ""
        if ref is not None and db_delta(before, after) is not None:
            gain = f" Output SQNR {before:.2f} → {after:.2f} dB against {ref.name}."
        why = self.rq.baseline_reason()
        if gain and "held-out" in held_out_note(v.notes):
            gain = gain[:-1] + " (all samples, calibration samples included)."
        self.panel.editor.status.setText(f"{v.name} is model B now.{gain}{held_out_note(v.notes)}" + (f" {why}" if why else first))
        self.panel.plot_tabs.setCurrentWidget(self.panel.plot)

    def _suggestion(self, s: SuggestResult | SurgicalSuggestResult | None) -> None:
        p, held = self.panel, self.rq.flow.suggestion  # the result, its file, source and objective
        at = p.suggest.objective.currentText() if isinstance(s, SurgicalSuggestResult) and held is not None and held.objective else None
        p.tradeoff.set_suggestion(s, at)
        if s is None:
            p.suggest.set_result("", False)
            return
        b = self.controller.models.get("B")
        p.suggest.set_result(suggest_text(s, at, b), s.best is not None and held is not None and held.path is not None)
        p.plot_tabs.setCurrentWidget(p.tradeoff)

    # ------------------------------------------------------------------ intents
    def add_selected(self) -> None:
        """Add the layer selected anywhere: B's op on the surgical route (the GUI's one layer
        identity, also an op A does not have), else A's op (or A's match of B's)."""
        ed = self.panel.editor
        b = self.controller.selection.op("B")
        if ed.current_route() == "surgical" and b is not None and ed.draft.quant_ops:
            ed.add_b_layers([b])
            return
        op = self.controller.selection.op("A")
        if op is None:
            ed.status.setText("Select a layer first (in a layer list or the layer error plot); it must exist in model A.")
            return
        ed.add_layers([op])

    def _layer_clicked(self, op_index: int) -> None:
        """The plot emits B's op index, the one layer identity of the GUI."""
        if self.compare.result is not None:
            self.controller.select_op("B", op_index)

    def save_folder(self) -> str:
        """Save dialogs start in the last folder saved into, else the folder of the model B the
        user opened (v0), never the auto-purged versions cache the shown version lives in."""
        v0 = self.rq.version(0)
        return self.ui.recent.save_dir_for(v0.path if v0 is not None else None)

    def make_model_b(self, i: int) -> None:
        """The user chose version i as model B: measured against the version it was made from
        (v0: nothing); the plan rows, which named ops of another model B, are cleared."""
        rq, ed = self.rq, self.panel.editor
        v = rq.version(i)
        if v is None or i == rq.current:
            return
        rq.switch_to(i)
        ed.clear_layers()
        ref = rq.version(rq.reference)
        ed.status.setText(f"{v.name} is model B now" + (f", measured against {ref.name}." if ref is not None
                                                         else "; no baseline (it was not made from another version)."))

    def choose_save_model(self) -> None:
        v = self.rq.version(self.rq.current)
        start = str(Path(self.save_folder()) / f"{Path(v.path).stem if v else 'model'}.tflite")
        path, _ = QFileDialog.getSaveFileName(self.ui.parent, "Save model B as", start, MODEL_FILTER)
        if path and self.rq.save_model_to(path):
            self.ui.recent.remember_save_dir(path)

    def choose_save_recipe(self) -> None:
        v = self.rq.version(self.rq.current)
        start = str(Path(self.save_folder()) / f"{Path(v.path).stem if v else 'model'}.recipe.json")
        path, _ = QFileDialog.getSaveFileName(self.ui.parent, "Save recipe", start, RECIPE_FILTER)
        if path and self.rq.save_recipe_to(path):
            self.ui.recent.remember_save_dir(path)

    def _install_menu(self) -> None:
        w = self.ui.parent
        m = self.ui.menu("Requantize", "Re&quantize")
        self.act_run = QAction("&Run requantize", w, shortcut=QKeySequence("Ctrl+Shift+R"))
        self.act_run.triggered.connect(lambda: self.rq.run(self.panel.editor.plan()))
        self.act_add = QAction("&Add selected layer to the plan", w, shortcut=QKeySequence("Ctrl+Shift+A"))
        self.act_add.triggered.connect(self.add_selected)
        self.act_save = QAction("&Save model B as…", w)
        self.act_save.triggered.connect(self.choose_save_model)
        self.act_recipe = QAction("Save &recipe…", w)
        self.act_recipe.triggered.connect(self.choose_save_recipe)
        for a in (self.act_run, self.act_add, self.act_save, self.act_recipe):
            m.addAction(a)

