"""Review features of the main window: op math tab, audit tab, report export, sessions.

`install_review(window)` adds them (one line in MainWindow) and keeps them in sync with the
controller (models, selection) and the comparison controller (`window.compare`, looked up
lazily: it may be installed after this). Numbers come from core (`opmath`, `audit`); this
module only decides when to recompute and where to show the result.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.audit import Finding, audit_model
from inspector.core.opmath import op_math
from inspector.gui.views.audit_view import AuditView
from inspector.gui.views.op_math_panel import OpMathPanel
from inspector.gui.workers import Worker

SYNC_AUDIT_OPS = 400  # models with more ops (over all subgraphs) are audited in a worker


def _same_file(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


class ComparisonSource(QObject):
    """The comparison that describes the open pair: `window.compare.result`, or one restored
    from a session when the comparison controller cannot take it. Stale results (for other
    files than the open models) are ignored."""

    changed = Signal()

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self._attached = None
        self._restored = None
        self._json_of: tuple[int, dict] | None = None
        window.controller.models_changed.connect(self._models_changed)
        QTimer.singleShot(0, self.attach)

    @property
    def compare(self):
        return getattr(self.window, "compare", None)

    def attach(self) -> None:
        c = self.compare
        if c is not None and self._attached is not c and hasattr(c, "result_changed"):
            c.result_changed.connect(lambda _r: self.changed.emit())
            if hasattr(c, "failed"):
                c.failed.connect(lambda msg: QTimer.singleShot(0, lambda: self._show_failure(msg)))
            self._attached = c

    def _show_failure(self, msg: str) -> None:
        """A failed run (worker crash, custom op...) is never silent: banner, unless already shown."""
        banner = self.window.banner
        if not (banner.isVisible() and msg in banner.text):
            self.window.show_error(f"Comparison failed: {msg}")

    def result(self):
        """The current ComparisonResult for models A and B, or None."""
        self.attach()
        c = self.compare
        r = getattr(c, "result", None) if c is not None else None
        r = r if r is not None else self._restored
        models = self.window.controller.models
        if r is None or models["B"] is None or not _same_file(r.quant_path, models["B"].path):
            return None
        if models["A"] is not None and not _same_file(r.float_path, models["A"].path):
            return None
        return r

    def json(self) -> dict | None:
        r = self.result()
        if r is None:
            return None
        if self._json_of is None or self._json_of[0] != id(r):
            self._json_of = (id(r), r.to_json())
        return self._json_of[1]

    def set_result(self, result) -> None:
        """Show a result restored from a session (through the comparison controller if it can)."""
        c = self.compare
        setter = getattr(c, "set_result", None) if c is not None else None
        self._restored = None
        if callable(setter):
            setter(result)
        else:
            self._restored = result
        self.changed.emit()

    def _models_changed(self) -> None:
        self.attach()
        if self._restored is not None and self.result() is None:
            self._restored = None


class ReviewFeatures(QObject):
    audit_updated = Signal(object)  # list[Finding] | None
    op_math_updated = Signal(object)  # OpMath | None

    def __init__(self, window) -> None:
        super().__init__(window)
        from inspector.gui.export import ReportExporter
        from inspector.gui.session_controller import SessionController

        self.window = window
        self.controller = c = window.controller
        self.source = ComparisonSource(window)
        self.op_math_panel = OpMathPanel()
        self.audit_view = AuditView()
        self.findings: list[Finding] | None = None
        self._audit_token = 0
        window.add_tab("Op math", self.op_math_panel)
        window.add_tab("Audit", self.audit_view)
        self.exporter = ReportExporter(window, self.source)
        self.session = SessionController(window, self.source)
        c.selection_changed.connect(lambda _s: self.update_op_math())
        c.models_changed.connect(self.update_audit)
        self.source.changed.connect(self.update_op_math)
        self.source.changed.connect(self.update_audit)
        self.audit_view.finding_selected.connect(self.select_finding)
        self._install_menu()

    def _install_menu(self) -> None:
        w = self.window
        file_menu = next(a.menu() for a in w.menuBar().actions() if a.menu() is not None and a.text().replace("&", "") == "File")
        before = getattr(w, "act_quit", None)
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
            om = op_math(model, op, comparison=self.source.json() if slot == "B" else None)
        except Exception as e:  # noqa: BLE001 - a model the math does not cover: say so, stay up
            self.op_math_panel.set_math(None, message=f"Cannot explain op {op} of {Path(model.path).name}: {type(e).__name__}: {e}")
            self.op_math_updated.emit(None)
            return
        label = "B · quantized" if slot == "B" else "A · float (no quantized model open)"
        self.op_math_panel.set_math(om, context=f"{label} · {Path(model.path).name}")
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
        comparison = self.source.json()
        w = Worker(audit_model, model, comparison)
        w.finished.connect(lambda fs: self._audited(token, model, fs, comparison is not None))
        w.failed.connect(lambda msg: self._audit_failed(token, model, msg))
        if sum(len(sg.ops) for sg in model.subgraphs) <= SYNC_AUDIT_OPS:
            w.run_here()
        else:
            self.controller.run_task(w, f"Auditing {Path(model.path).name}")

    def _audited(self, token: int, model, findings: list[Finding], with_comparison: bool) -> None:
        if token != self._audit_token:
            return
        self.findings = findings
        note = "with the ranges observed in the comparison" if with_comparison else "run a comparison to add range-use and clipping checks"
        self.audit_view.set_findings(findings, Path(model.path).name, note)
        self.audit_updated.emit(findings)

    def _audit_failed(self, token: int, model, msg: str) -> None:
        if token == self._audit_token:
            self.audit_view.set_findings(None, note=f"Audit of {Path(model.path).name} failed: {msg}")
            self.window.show_error(f"Audit of {model.path} failed: {msg}", "B")

    def select_finding(self, f: Finding) -> None:
        """Select the finding's op (and its tensor) in model B, and so in every linked view."""
        c = self.controller
        if f.subgraph:
            self.window.statusBar().showMessage(f"This finding is in subgraph {f.subgraph}; the panes show subgraph 0.", 8000)
            return
        if f.op_index is not None:
            c.select_op("B", f.op_index, tensor=f.tensor_index)
        elif f.tensor_index is not None:
            c.select_tensor("B", f.tensor_index)


def install_review(window) -> ReviewFeatures:
    """Add the op math and audit tabs, File > Export report / Save / Open session to `window`."""
    window.review = ReviewFeatures(window)
    return window.review
