"""Review features of the main window: op math tab, audit tab, report export, sessions.

`install_review(window, compare)` adds them (one line in MainWindow) and keeps them in sync
with the controller (models, selection) and the comparison controller it is given. Numbers come from core (`opmath`, `audit`); this
module only decides when to recompute and where to show the result.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.quantmath.opmath import op_math
from inspector.core.review.audit import Finding, audit_model
from inspector.gui.opmath.op_math_panel import OpMathPanel
from inspector.gui.review.audit_view import AuditView
from inspector.gui.workers import Worker, guarded

SYNC_AUDIT_OPS = 400  # models with more ops (over all subgraphs) are audited in a worker


class ComparisonSource(QObject):
    """The comparison that describes the open pair (the state's current comparison, held by
    the comparison controller); stale results (for other files than the open models) are ignored."""

    changed = Signal()

    def __init__(self, window, compare) -> None:
        super().__init__(window)
        self.window = window
        self.compare = compare
        self.state = compare.state
        compare.result_changed.connect(lambda _r: self.changed.emit())
        compare.failed.connect(lambda msg: QTimer.singleShot(0, lambda: self._show_failure(msg)))

    def _show_failure(self, msg: str) -> None:
        """A failed run (worker crash, custom op...) is never silent: banner, unless already shown."""
        banner = self.window.banner
        if not (banner.isVisible() and msg in banner.text):
            self.window.show_error(f"Comparison failed: {msg}", owner="compare")

    def result(self):
        """The current ComparisonResult for models A and B, or None."""
        return self.state.current_comparison()

    def set_result(self, result) -> None:
        """Show a result restored from a session (through the comparison controller)."""
        self.compare.set_result(result)

class ReviewFeatures(QObject):
    audit_updated = Signal(object)  # list[Finding] | None
    op_math_updated = Signal(object)  # OpMath | None

    def __init__(self, window, compare, requantize) -> None:
        super().__init__(window)
        from inspector.gui.review.export import ReportExporter
        from inspector.gui.session.controller import SessionController

        self.window = window
        self.controller = c = window.controller
        self.source = ComparisonSource(window, compare)
        self.op_math_panel = OpMathPanel()
        self.audit_view = AuditView()
        self.findings: list[Finding] | None = None
        self._audit_token = 0
        window.add_tab("Op math", self.op_math_panel)
        window.add_tab("Audit", self.audit_view)
        self.exporter = ReportExporter(window, self.source)
        self.session = SessionController(window, self.source, compare, requantize)
        c.selection_changed.connect(lambda _s: self.update_op_math())
        c.models_changed.connect(self.update_audit)
        self.source.changed.connect(self.update_op_math)
        self.source.changed.connect(self.update_audit)
        self.audit_view.finding_selected.connect(self.select_finding)
        c.signature_changed.connect(lambda _k: self._show_subgraph())
        self._install_menu()

    def _install_menu(self) -> None:
        w = self.window
        file_menu = w.ui.menu("File")
        before = w.act_quit
        acts = [self.session.act_open, self.session.act_save, None, self.exporter.action, None]
        for a in acts:
            if a is None:
                file_menu.insertSeparator(before) if before is not None else file_menu.addSeparator()
            elif before is not None:
                file_menu.insertAction(before, a)
            else:
                file_menu.addAction(a)

    # ------------------------------------------------------------------ op math
    def update_op_math(self) -> None:
        c = self.controller
        slot = "B" if c.models["B"] is not None else "A"
        model, op = c.models[slot], c.selection.op(slot)
        if model is None or op is None:
            self.op_math_panel.set_math(None)
            self.op_math_updated.emit(None)
            return
        try:
            om = op_math(model, op, comparison=self.source.result() if slot == "B" else None)
        except Exception as e:  # noqa: BLE001 - a model the math does not cover: say so, stay up
            self.op_math_panel.set_math(None, message=f"Cannot explain op {op} of {Path(model.path).name}: {type(e).__name__}: {e}")
            self.op_math_updated.emit(None)
            return
        label = "B · quantized" if slot == "B" else "A · float (no quantized model open)"
        where = f" · signature '{model.signature_key}' (subgraph {om.subgraph})" if model.signature_key else ""
        self.op_math_panel.set_math(om, context=f"{label} · {Path(model.path).name}{where}")
        self.op_math_updated.emit(om)

    # ------------------------------------------------------------------ audit
    def update_audit(self) -> None:
        model = self.controller.models["B"]
        self._audit_token += 1
        token = self._audit_token
        if model is None:
            self.findings = None
            self.audit_view.set_findings(None)
            self.audit_updated.emit(None)
            return
        comparison = self.source.result()
        w = Worker(audit_model, model, comparison, self.controller.models["A"])  # A: float16 overflow/flush checks
        w.finished.connect(guarded(self, lambda fs: self._audited(token, model, fs, comparison is not None)))
        w.failed.connect(guarded(self, lambda msg: self._audit_failed(token, model, msg)))
        if sum(len(sg.ops) for sg in model.subgraphs) <= SYNC_AUDIT_OPS:
            w.run_here()
        else:
            self.controller.run_task(w, f"Auditing {Path(model.path).name}")

    def _audited(self, token: int, model, findings: list[Finding], with_comparison: bool) -> None:
        if token != self._audit_token:
            return
        self.findings = findings
        self._show_subgraph()
        note = "with the ranges observed in the comparison" if with_comparison else "run a comparison to add range-use and clipping checks"
        self.audit_view.set_findings(findings, Path(model.path).name, note)
        self.audit_updated.emit(findings)

    def _show_subgraph(self) -> None:
        """Findings outside the subgraph the panes show name their subgraph (and signature)."""
        model = self.controller.models["B"]
        if model is not None:
            labels = {sig.subgraph: f"signature '{sig.key}'" for sig in model.signatures}
            self.audit_view.model.set_shown_subgraph(model.main.index, labels)

    def _audit_failed(self, token: int, model, msg: str) -> None:
        if token == self._audit_token:
            self.audit_view.set_findings(None, note=f"Audit of {Path(model.path).name} failed: {msg}")
            self.window.show_error(f"Audit of {model.path} failed: {msg}", "B")

    def select_finding(self, f: Finding) -> None:
        """Select the finding's op (and its tensor) in model B, and so in every linked view.

        Op and tensor indices are those of the finding's subgraph: a finding in another subgraph
        than the panes show switches to the signature that opens it (when both models have it)."""
        c = self.controller
        model = c.models["B"]
        if model is None or (f.op_index is None and f.tensor_index is None):
            return  # a finding about the whole model: nothing to select
        if f.subgraph != model.main.index:
            key = next((s.key for s in c.state.signature_choices() if s.subgraph == f.subgraph), None)
            if key is None:
                self.window.statusBar().showMessage(
                    f"This finding is in subgraph {f.subgraph}, which no signature of both models opens; "
                    f"the panes show subgraph {model.main.index}.", 8000)
                return
            c.set_signature(key)
            model = c.models["B"]
            if model is None or model.main.index != f.subgraph:
                return
            self.window.statusBar().showMessage(f"Showing signature '{key}' (subgraph {f.subgraph}) for this finding", 8000)
        if f.op_index is not None:
            c.select_op("B", f.op_index, tensor=f.tensor_index)
        elif f.tensor_index is not None:
            c.select_tensor("B", f.tensor_index)


def install_review(window, compare, requantize) -> ReviewFeatures:
    """Add the op math and audit tabs, File > Export report / Save / Open session to `window`."""
    window.review = ReviewFeatures(window, compare, requantize)
    return window.review
