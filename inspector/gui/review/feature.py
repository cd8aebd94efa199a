"""The review feature: the Audit tab and File > Export report (`ReviewFeature(controller, ui,
source)`, composed by the main window).

It keeps the audit in sync with the models and the comparison (`source`, from the comparison
feature). Numbers come from core (`review.audit`); this module only decides when to recompute
and where to show the result.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.review.audit import Finding, audit_model
from inspector.core.tflite.model import Model
from inspector.gui.protocols import ModelsController, ResultSource
from inspector.gui.review.audit_view import AuditView
from inspector.gui.review.export import ReportExporter
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded

SYNC_AUDIT_OPS = 400  # models with more ops (over all subgraphs) are audited in a worker


class ReviewFeature(QObject):
    audit_updated = Signal(object)  # list[Finding] | None

    def __init__(self, controller: ModelsController, ui: UiServices, source: ResultSource) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.controller = c = controller
        self.source = source
        self.audit_view = AuditView()
        self.findings: list[Finding] | None = None
        self._audit_token = 0
        ui.add_tab("Audit", self.audit_view)
        self.exporter = ReportExporter(c, ui, source)
        c.pair_changed.connect(self.update_audit)
        self.source.changed.connect(self.update_audit)
        self.audit_view.finding_selected.connect(self.select_finding)
        c.signature_changed.connect(lambda _k: self._show_subgraph())
        c.signature_changed.connect(lambda _k: self.update_audit())  # the findings name the chosen subgraph
        self._install_menu()

    def _install_menu(self) -> None:
        self.ui.insert_actions("File", "quit", [self.exporter.action], separator=True)

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

    def _audited(self, token: int, model: Model, findings: list[Finding], with_comparison: bool) -> None:
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

    def _audit_failed(self, token: int, model: Model, msg: str) -> None:
        if token == self._audit_token:
            self.audit_view.set_findings(None, note=f"Audit of {Path(model.path).name} failed: {msg}")
            self.ui.show_error(f"Audit of {model.path} failed: {msg}", "B")

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
                self.ui.status(
                    f"This finding is in subgraph {f.subgraph}, which no signature of both models opens; "
                    f"the panes show subgraph {model.main.index}.", 8000)
                return
            c.set_signature(key)
            model = c.models["B"]
            if model is None or model.main.index != f.subgraph:
                return
            self.ui.status(f"Showing signature '{key}' (subgraph {f.subgraph}) for this finding", 8000)
        if f.op_index is not None:
            c.select_op("B", f.op_index, tensor=f.tensor_index)
        elif f.tensor_index is not None:
            c.select_tensor("B", f.tensor_index)

