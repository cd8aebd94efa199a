"""File > Export report…: HTML, JSON, comparison CSV and Model Explorer overlay, in a worker.

Uses `core.report.build_report` / `write_report` (atomic writes; input models are never
overwritten) with the current comparison, if there is one; CSV and the Model Explorer
overlay need one. The dialog proposes `<model B>-report.*` in the last export folder
(QSettings "export/last_dir"), else the user's last save / model folder, else home; never
inside the app's resources (where the bundled example lives).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QCheckBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.core.compare.result import ComparisonResult
from inspector.core.errors import InputError
from inspector.core.progress import TaskState, as_task
from inspector.core.review.report import build_report, write_report
from inspector.core.state.app_state import same_file
from inspector.core.state.provenance import version_provenance
from inspector.gui.protocols import ModelsController, ResultSource
from inspector.gui.recent import in_resources
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded

KINDS = ("html", "json", "csv", "model_explorer")
SUFFIXES = {"html": ".html", "json": ".json", "csv": ".csv", "model_explorer": ".model-explorer.json"}
LABELS = {
    "html": "HTML report (self-contained, opens offline)",
    "json": "JSON (same content as the HTML)",
    "csv": "Comparison CSV (one row per layer)",
    "model_explorer": "Model Explorer overlay (per-op error on the graph)",
}
NEEDS_COMPARISON = ("csv", "model_explorer")
SETTINGS_DIR = "export/last_dir"


def export_paths(folder: str | Path, base: str, kinds) -> dict[str, str]:
    return {k: str(Path(folder) / f"{base}{SUFFIXES[k]}") for k in KINDS if k in kinds}


def export_job(float_path: str, quant_path: str | None, comparison: ComparisonResult | None, paths: dict[str, str],
               task: TaskState | None = None, provenance: dict | None = None) -> list[str]:
    """Build the report and write the requested files (runs in a worker thread); `provenance`:
    where model B comes from when it is a version made here."""
    task = as_task(task)
    task.report(0.05, "Building the report (audit, histograms, op math)")
    report = build_report(float_path, quant_path, comparison, provenance=provenance)
    task.report(0.7, "Writing report files")
    return write_report(report, comparison, html=paths.get("html"), json_path=paths.get("json"), csv=paths.get("csv"),
                        model_explorer=paths.get("model_explorer"))


class ReportExporter(QObject):
    exported = Signal(list)  # paths written
    failed = Signal(str)

    def __init__(self, controller: ModelsController, ui: UiServices, source: ResultSource) -> None:
        super().__init__(ui.parent)
        self.controller, self.ui, self.source = controller, ui, source
        self.action = QAction("&Export report…", ui.parent)
        self.action.setShortcut(QKeySequence("Ctrl+E"))
        self.action.setStatusTip("Write the review report: HTML, JSON, comparison CSV, Model Explorer overlay")
        self.action.triggered.connect(self.show_dialog)
        self.worker: Worker | None = None
        self.dialog: ExportDialog | None = None

    # ------------------------------------------------------------------ defaults
    def models(self) -> tuple[str | None, str | None]:
        m = self.controller.models
        return (m["A"].path if m["A"] else None), (m["B"].path if m["B"] else None)

    def provenance(self, quant_path: str | None) -> dict | None:
        """The provenance of model B when it is the current version made here (not the opened one)."""
        st = self.controller.state
        v = st.version(st.current)
        if quant_path is None or v is None or not same_file(v.path, quant_path):
            return None
        return version_provenance(st.versions, st.current)

    def default_folder(self) -> str:
        last = str(self.ui.settings.value(SETTINGS_DIR, "") or "")
        if last and Path(last).is_dir() and not in_resources(last):
            return last
        return self.ui.recent.save_dir  # the last folder saved into / models came from, else home; never resources

    def default_base(self) -> str:
        a, b = self.models()
        p = b or a
        return f"{Path(p).stem}-report" if p else "report"

    # ------------------------------------------------------------------ export
    def export(self, folder: str | Path, base: str, kinds=KINDS) -> Worker:
        """Write the report files in a worker; `exported(paths)` or `failed(message)` follow."""
        a, b = self.models()
        first, second = (a, b) if a else (b, None)
        comparison = self.source.result()
        kinds = [k for k in kinds if comparison is not None or k not in NEEDS_COMPARISON]
        if first is None:
            raise InputError("open a model first: there is nothing to report on")
        if not kinds:
            raise InputError("choose at least one file to export")
        self.ui.settings.setValue(SETTINGS_DIR, str(Path(folder)))
        paths = export_paths(folder, base, kinds)
        w = Worker(export_job, first, second, comparison, paths, wants_progress=True, provenance=self.provenance(second))
        w.finished.connect(guarded(self, self._done))
        w.failed.connect(guarded(self, self._failed))
        self.worker = w
        self.controller.run_task(w, "Exporting report")
        return w

    def _done(self, written: list[str]) -> None:
        names = ", ".join(Path(p).name for p in written)
        folder = Path(written[0]).parent if written else ""
        self.ui.status(f"Report written to {folder}: {names}", 15000)
        self.exported.emit(written)

    def _failed(self, msg: str) -> None:
        self.ui.show_error(f"Export failed: {msg}")
        self.failed.emit(msg)

    def show_dialog(self) -> ExportDialog | None:
        a, b = self.models()
        if a is None and b is None:
            self.ui.show_error("Export report: open a model first.")
            return None
        d = ExportDialog(self.default_folder(), self.default_base(), self.source.result() is not None, self.ui.parent)
        d.accepted.connect(lambda: self._accepted(d))
        d.open()  # window-modal; the event loop keeps running
        self.dialog = d
        return d

    def _accepted(self, d: ExportDialog) -> None:
        try:
            self.export(d.folder.text(), d.base.text().strip() or "report", d.kinds())
        except InputError as e:
            self.ui.show_error(f"Export failed: {e}")


class ExportDialog(QDialog):
    def __init__(self, folder: str, base: str, has_comparison: bool, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Export report")
        self.folder = QLineEdit(folder)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        folder_w = QWidget()
        folder_w.setLayout(row)
        row.setContentsMargins(0, 0, 0, 0)
        self.base = QLineEdit(base)
        form = QFormLayout()
        form.addRow("Folder", folder_w)
        form.addRow("File name", self.base)
        self.checks: dict[str, QCheckBox] = {}
        for k in KINDS:
            cb = QCheckBox(LABELS[k])
            ok = has_comparison or k not in NEEDS_COMPARISON
            cb.setChecked(ok)
            cb.setEnabled(ok)
            if not ok:
                cb.setToolTip("Needs a comparison: run one first")
            self.checks[k] = cb
            form.addRow("", cb)
        self.files = QLabel()
        self.files.setWordWrap(True)
        note = QLabel("" if has_comparison else "<i>No comparison yet: the report has the model summaries, the audit "
                      "and no error figures. Run a comparison first for the full report.</i>")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addLayout(form)
        lay.addWidget(note)
        lay.addWidget(self.files)
        lay.addWidget(buttons)
        for w in (self.folder, self.base):
            w.textChanged.connect(self._preview)
        for cb in self.checks.values():
            cb.toggled.connect(self._preview)
        self._preview()

    def kinds(self) -> list[str]:
        return [k for k, cb in self.checks.items() if cb.isChecked() and cb.isEnabled()]

    def _preview(self) -> None:
        paths = export_paths(self.folder.text(), self.base.text().strip() or "report", self.kinds())
        self.files.setText("Writes: " + ", ".join(Path(p).name for p in paths.values()) if paths else "Nothing selected")

    def _browse(self) -> None:
        d = QFileDialog.getExistingDirectory(self, "Export report to", self.folder.text())
        if d:
            self.folder.setText(d)
