"""The diagnosis' actions (`DiagnosisFeature(controller, ui, compare, requantize_features,
parity)`, composed by the main window after the features it calls):

- "Apply fix" on a layer (the layer lists' context menu, Compare menu Ctrl+Shift+F): the layer's
  diagnosed edit is queued in the Requantize tab's plan, run there (worker, progress, Cancel),
  and once the edited model is compared the before/after of the fixed layer and the model
  output is shown (the versions view shows every layer's delta);
- the root-cause strip above the output summary (`root_cause_strip`): the measured root causes
  and "Apply fix" for the first one's fix (`apply_root_fix`), then the held-out accuracy before
  and after with the outcome;
- "Extract as repro…" on a layer (context menu, Compare menu): `extract_op` in a worker (the
  capture runs in the worker process), written to a chosen folder.
Everything shown is computed in core (`requantize.diagnosis_fix`, `compare.extract`).
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QFileDialog, QMenu

from inspector.core.compare.diagnosis import with_parity
from inspector.core.compare.diagnosis_text import fix_words
from inspector.core.compare.diagnosis_types import Fix, RootCause
from inspector.core.compare.extract import Extraction, extract_op, write_extraction
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.progress import TaskState
from inspector.core.requantize.diagnosis_fix import fix_headline, fix_lowered, fix_outcome, fix_plan
from inspector.core.runtime.worker import run_isolated
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import same_file
from inspector.core.state.versions import Version
from inspector.core.viewdata.layer_series import cause_column, fix_label
from inspector.gui.diagnosis.root_cause_strip import RootCauseStrip
from inspector.gui.protocols import Comparison, ModelsController, Parity, PlanRunner
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded


def extract_job(quant_path: str, op: int, samples: SampleSettings, float_path: str | None, signature: str | None, out_dir: str,
                task: TaskState | None) -> Extraction:  # fmt: skip
    """Capture in the worker process, then write the folder (this thread)."""
    ex = run_isolated(extract_op, quant_path, op, samples, kwargs={"float_path": float_path, "signature": signature},
                      task=task, step=f"capturing op {op}", models=tuple(p for p in (quant_path, float_path) if p))
    write_extraction(ex, out_dir)
    return ex


class DiagnosisFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices, compare: Comparison, requantize_features: PlanRunner,
                 parity: Parity) -> None:  # fmt: skip
        super().__init__(ui.parent)
        self.ui = ui
        self.controller = controller
        self.compare = compare
        self.requantize = requantize_features  # its intents: apply_plan, say
        self.rq = requantize_features.rq
        self.pending: tuple[Fix, ComparisonResult | None, str] | None = None  # (fix, the comparison before it, its label)
        self.root_pending: RootCause | None = None  # the RootCause whose fix runs (the strip's Apply fix)
        self.outcome: list[str] = []  # the last fix's before/after lines
        self.extract_worker: Worker | None = None
        self.strip = RootCauseStrip()  # the root causes lead: above the output summary
        self.strip.apply_requested.connect(self.apply_root_fix)
        ui.add_strip(self.strip)
        self._install_menu()
        for slot, pane in ui.panes.items():
            view = pane.op_view
            view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            view.customContextMenuRequested.connect(lambda pos, s=slot, v=view: self._context_menu(s, v, pos))
        self.rq.finished.connect(self._fix_finished)
        # the kernel cause needs runtime parity: re-diagnose when either result changes (after the
        # comparison features have filled the columns from the comparison alone)
        self.compare.result_changed.connect(lambda _r: self.refresh_causes())
        self.compare.result_changed.connect(self.strip.set_result)
        controller.pair_changed.connect(self._pair_changed)
        self.parity = parity  # the ParityController
        self.parity.result_changed.connect(lambda _r: self.refresh_causes())
        self.rq.failed.connect(lambda _m: setattr(self, "pending", None))

    def _pair_changed(self) -> None:
        if self.controller.models["A"] is None or self.controller.models["B"] is None:
            self.strip.release_room()  # no result can follow: the strip's kept room goes

    # ------------------------------------------------------------------ menus
    def _install_menu(self) -> None:
        w = self.ui.parent
        menu = self.ui.menu("Compare")
        self.act_fix = QAction("Apply the selected layer's &fix", w, shortcut=QKeySequence("Ctrl+Shift+F"))
        self.act_fix.setStatusTip("Queue the diagnosed edit of the selected layer in the Requantize tab and run it")
        self.act_fix.triggered.connect(lambda: self.apply_fix(self.controller.selection.op("B")))
        self.act_extract = QAction("E&xtract the selected op as repro…", w)
        self.act_extract.triggered.connect(lambda: self.choose_extract(self.controller.selection.op("B")))
        menu.addSeparator()
        menu.addAction(self.act_fix)
        menu.addAction(self.act_extract)

    def _b_op(self, slot: str, row: int) -> int | None:
        return row if slot == "B" else self.controller.counterpart_op("A", row)

    def _context_menu(self, slot: str, view: QAbstractItemView, pos: QPoint) -> None:
        idx = view.indexAt(pos)
        if not idx.isValid():
            return
        op = self._b_op(slot, idx.row())
        menu = QMenu(view)
        layer = self.layer(op)
        fix = None if layer is None or layer.diagnosis is None else layer.diagnosis.fix
        a = menu.addAction(f"Apply fix: {fix_label(layer)}" if fix and layer is not None else "Apply fix (no fix diagnosed)")
        a.setEnabled(fix is not None)
        a.triggered.connect(lambda: self.apply_fix(op))
        b = menu.addAction("Extract as repro…")
        b.setEnabled(op is not None and self.controller.models["B"] is not None)
        b.triggered.connect(lambda: self.choose_extract(op))
        menu.popup(view.viewport().mapToGlobal(pos))
        self.menu = menu  # kept for tests

    def diagnosed(self) -> ComparisonResult | None:
        """The comparison, re-diagnosed with the runtime-parity result of the same model B."""
        a, b, r = self.controller.models["A"], self.controller.models["B"], self.compare.result
        if r is None or a is None or b is None:
            return r
        parity = self.parity.result
        if parity is None or not same_file(parity.model, r.quant_path):  # parity of another model B: not this one's
            return r  # (with_parity also drops a parity of another signature's subgraph)
        return with_parity(r, a, b, parity)

    def refresh_causes(self) -> None:
        r = self.diagnosed()
        if r is None:
            return
        for slot, pane in self.ui.panes.items():
            pane.set_causes(dict(cause_column(r, float_side=slot == "A")))  # made once per result

    # ------------------------------------------------------------------ apply fix
    def layer(self, op: int | None) -> LayerResult | None:
        r = self.diagnosed()
        return None if r is None else r.layer_for_op(op)

    def apply_fix(self, op: int | None) -> Worker | None:
        layer, r = self.layer(op), self.compare.result  # a layer of the comparison shown: r is not None
        if r is None or layer is None or layer.diagnosis is None or layer.diagnosis.fix is None:
            self.ui.status("Select a layer whose diagnosis proposes a fix (run a comparison first).", 8000)
            return None
        fix = layer.diagnosis.fix
        plan = fix_plan(fix, signature=r.signature)
        self.pending = (fix, r, fix_label(layer))
        w = self.requantize.apply_plan(plan)  # queued in the Requantize tab's plan, run there
        if w is None:
            self.pending = None
        return w

    def apply_root_fix(self, root: RootCause | None = None) -> Worker | None:
        """Apply the fix of the comparison's first root cause (the strip's Apply fix)."""
        r = self.compare.result
        root = root or (r.root_causes[0] if r is not None and r.root_causes else None)
        if r is None or root is None or root.fix is None:
            self.ui.status("No measured root cause with a fix (run a comparison first).", 8000)
            return None
        label = fix_words(root.fix)
        self.pending = (root.fix, r, label)
        self.root_pending = root
        w = self.requantize.apply_plan(fix_plan(root.fix, signature=r.signature))
        if w is None:
            self.pending = self.root_pending = None
        return w

    def _fix_finished(self, v: Version) -> None:
        if self.pending is None:
            return
        fix, before, label = self.pending
        self.pending = None
        after = getattr(v, "comparison", None) or self.compare.result
        if before is None or after is None:
            return
        self.outcome = fix_outcome(before, after, fix)
        root, self.root_pending = self.root_pending, None
        if root is not None and root.accuracy is not None:  # measured on the held-out samples by blame
            f, b, a = root.accuracy
            self.outcome.insert(0, f"held-out accuracy {b:.1f} → {a:.1f} % (float {f:.1f} %), output SQNR {root.fix_gain_db:+.1f} dB held out")
        worse = fix_lowered(before, after)  # a fix that lowers the model output is said, and can be undone
        if worse is not None and v.source:
            self.outcome.insert(0, worse)
            self.strip.offer_revert(worse, v.path, partial(self.requantize.revert_to, v.source))
        # the key figures first (the status keeps two lines, the status bar one; the tooltip all)
        gain = [n for n in getattr(v, "notes", ()) if n.startswith("gain: ")]
        self.requantize.say(f"Applied the fix ({label}): {fix_headline(before, after)} · now model B: {v.name}\n" + "\n".join(gain + self.outcome))

    # ------------------------------------------------------------------ extract
    def choose_extract(self, op: int | None) -> None:
        b = self.controller.models["B"]
        if op is None or b is None:
            self.ui.status("Select an op of model B to extract.", 8000)
            return
        parent = QFileDialog.getExistingDirectory(self.ui.parent, f"Extract op {op}: choose where its folder goes",
                                                  str(self.ui.recent.save_dir))
        if parent:
            self.extract(op, str(Path(parent) / f"{Path(b.path).stem}_op{op}"))  # a new folder there

    def extract(self, op: int, folder: str) -> Worker | None:
        a, b = self.controller.models["A"], self.controller.models["B"]
        if b is None:
            return None
        samples = (self.compare.run_options or self.compare.options).samples  # the comparison's samples
        signature = self.compare.result.signature if self.compare.result is not None else None
        w = Worker(extract_job, b.path, op, samples, a.path if a is not None else None, signature, folder, wants_progress=True)
        w.finished.connect(guarded(self, lambda ex: self._extracted(ex, folder)))
        w.failed.connect(guarded(self, lambda msg: self.ui.show_error(f"Extract op {op} failed: {msg}")))
        self.extract_worker = w
        self.controller.run_task(w, f"Extracting op {op}")
        return w

    def _extracted(self, ex: Extraction, folder: str) -> None:
        exact = "bit-exact" if ex.reference_bit_exact else "NOT bit-exact"
        lsb = ", ".join(f"{v:g}" for v in ex.xnnpack_max_lsb.values()) or "-"
        self.ui.status(
            f"Extracted op {ex.op_index} ({ex.op_type}) over {ex.samples} samples into {folder}: reference kernels {exact}, "
            f"XNNPACK max {lsb} LSB; run python run.py there", 15000)

