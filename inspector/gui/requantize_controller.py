"""The requantize loop of one window (`window.requantize`): plan -> new model B -> compare again.

Versions: v0 is the quantized model the user opened; every run (or applied suggestion) writes a
new model into a versions folder (atomically, never over an input) and becomes model B, the
previous B staying a named version. After each switch of B the comparison re-runs through
`window.compare` (or its stored result is shown) with the reference version's result as the
baseline series, and `delta_changed` carries the per-layer / output / size deltas computed by
`core.requant_delta`. Requantize and suggest run in the worker process (`core.isolation`) from a
`Worker` thread: progress, Cancel, and a LiteRT crash is an error message, not a dead app.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.compare import CompareOptions
from inspector.core.requant_choices import original_name, version_name
from inspector.core.requant_delta import VersionDelta, output_sqnr_db, version_delta
from inspector.core.requant_plan import Plan, infer_base
from inspector.gui.requantize_io import VersionFiles, file_name, file_size
from inspector.gui.requantize_state import Version, requant_thread, same_file, suggest_thread
from inspector.gui.workers import Worker
from inspector.paths import new_versions_folder


class RequantizeController(VersionFiles, QObject):
    versions_changed = Signal()
    current_changed = Signal()  # current and/or reference version changed
    delta_changed = Signal(object)  # VersionDelta | None
    running_changed = Signal(bool, str)  # running, what
    progress = Signal(float, str)
    failed = Signal(str)
    finished = Signal(object)  # the new Version once its comparison is in
    suggestion_changed = Signal(object)  # SuggestResult | None
    saved = Signal(str)  # path written

    def __init__(self, window, folder: str | Path | None = None) -> None:
        super().__init__(window)
        self.window = window
        self.controller = window.controller
        self._folder = Path(folder) if folder is not None else None
        self.versions: list[Version] = []
        self.current: int | None = None
        self.reference: int | None = None
        self.delta: VersionDelta | None = None
        self.suggestion = None
        self.suggestion_path: str | None = None
        self.worker: Worker | None = None
        self._awaiting: int | None = None  # version whose comparison completes a run
        self._attached = None
        self.controller.models_changed.connect(self._models_changed)
        QTimer.singleShot(0, self._attach)

    # ------------------------------------------------------------------ collaborators
    @property
    def compare(self):
        return getattr(self.window, "compare", None)

    def _attach(self) -> None:
        c = self.compare
        if c is not None and c is not self._attached:
            c.result_changed.connect(self._result_changed)
            self._attached = c

    @property
    def folder(self) -> Path:
        """Where new versions are written (created on first use)."""
        if self._folder is None:
            self._folder = new_versions_folder()
        self._folder.mkdir(parents=True, exist_ok=True)
        return self._folder

    @property
    def running(self) -> bool:
        return self.worker is not None and not self.worker.is_done

    def version(self, i: int | None) -> Version | None:
        return self.versions[i] if i is not None and 0 <= i < len(self.versions) else None

    def inferred_base(self) -> str:
        v0 = self.version(0)
        model = self.controller.models["B"]
        if v0 is not None and v0.base:
            return v0.base
        return infer_base(model) if model is not None else "int8"

    def comparison_options(self) -> CompareOptions:
        """The options of the shown comparison (so before and after use the same samples), else
        the inputs panel's, else the comparison controller's."""
        c = self.compare
        opts = None
        if c is not None and c.result is not None and getattr(c, "run_options", None) is not None:
            opts = c.run_options
        if opts is None:
            panel = getattr(getattr(self.window, "compare_features", None), "inputs", None)
            opts = panel.options() if panel is not None else getattr(c, "options", None)
        return dataclasses.replace(opts or CompareOptions(), keep_values=frozenset())

    # ------------------------------------------------------------------ versions follow model B
    def _models_changed(self) -> None:
        self._attach()
        a, b = self.controller.models["A"], self.controller.models["B"]
        if b is None or a is None:
            return
        hit = next((i for i, v in enumerate(self.versions) if same_file(v.path, b.path)), None)
        if hit is None or not same_file(self.versions[0].float_path, a.path):
            base = infer_base(b)
            self.versions = [Version(0, original_name(base), b.path, a.path, "opened", base=base, size_bytes=file_size(b.path))]
            self.current, self.reference, self._awaiting = 0, None, None
            self.suggestion = None
            self.suggestion_changed.emit(None)
            self.versions_changed.emit()
            self._update()
            return
        self.current = hit
        QTimer.singleShot(0, self._show_current)  # after the comparison controller dropped its stale result

    def _show_current(self) -> None:
        v, ref, c = self.version(self.current), self.version(self.reference), self.compare
        if v is None or c is None:
            self._update()
            return
        if ref is not None and ref is not v and ref.comparison is not None:
            c.set_baseline(ref.comparison, f"before: {ref.name}")
        elif ref is None or ref is v:
            c.clear_baseline()
        if v.comparison is not None:
            if c.result is not v.comparison:
                c.set_result(v.comparison)
        else:  # a run still going is for an earlier model B: run() replaces it
            c.run(self.comparison_options())
        self._update()

    def _result_changed(self, result) -> None:
        v = self.version(self.current)
        a = self.controller.models["A"]
        if result is None or v is None or a is None:
            return
        if same_file(result.quant_path, v.path) and same_file(result.float_path, a.path):
            if v.comparison is not result:
                v.comparison = result
                self.versions_changed.emit()
            self._update()
            if self._awaiting == self.current:
                self._awaiting = None
                self.finished.emit(v)

    def _update(self) -> None:
        v, ref = self.version(self.current), self.version(self.reference)
        self.delta = None
        if v is not None and ref is not None and ref is not v and v.comparison is not None and ref.comparison is not None:
            self.delta = version_delta(ref.comparison, v.comparison, ref.size_bytes, v.size_bytes, (ref.name, v.name))
        self.current_changed.emit()
        self.delta_changed.emit(self.delta)

    # ------------------------------------------------------------------ intents
    def switch_to(self, i: int) -> None:
        """Make version i model B (its stored comparison is shown, else the comparison runs)."""
        v = self.version(i)
        if v is None:
            return
        self.current = i
        b = self.controller.models["B"]
        if b is not None and same_file(b.path, v.path):
            self._show_current()
        else:
            self.controller.open_model("B", v.path)

    def set_reference(self, i: int | None) -> None:
        """The version drawn as the baseline series and used as 'before' in the deltas."""
        self.reference = i if self.version(i) is not None else None
        self._show_current()

    def compare_versions(self, before: int, after: int) -> None:
        self.reference = before
        self.switch_to(after)

    def run(self, plan: Plan) -> Worker | None:
        """Requantize model A by `plan`; the result becomes the next version and model B."""
        a, v = self.controller.models["A"], self.version(self.current)
        if a is None or v is None:
            self._fail("Open the float model (A) and its quantized twin (B) first.")
            return None
        if self.running:
            self._fail("A requantize or suggest run is already going; wait or cancel it.")
            return None
        opts = self.comparison_options()
        n = len(self.versions)
        out = self.folder / file_name(version_name(n, plan, a))
        c = self.compare
        shown = c.result if c is not None else None
        if v.comparison is None and shown is not None and same_file(shown.quant_path, v.path):
            v.comparison = shown
        w = Worker(requant_thread, a.path, v.path, plan, opts, str(out), self._protected(opts), v.comparison is None, wants_progress=True)
        w.finished.connect(lambda run: self._requantized(run, plan, v, n))
        return self._start(w, f"Requantizing {Path(a.path).name}")

    def _requantized(self, run, plan: Plan, before: Version, n: int) -> None:
        if run.baseline is not None and before.comparison is None:
            before.comparison = run.baseline
        a = self.controller.models["A"]
        name = version_name(n, plan, a)
        notes = list(run.result.notes)
        if before.kind == "opened":
            notes.append(f"every layer was calibrated again on the comparison's samples, not only the ones you chose, so "
                         f"unselected layers can move too ({before.name} was calibrated by the tool that made it)")  # fmt: skip
        self._add_version(Version(n, name, run.path, run.result.float_path, "requantized", plan=plan,
                                  recipe=run.result.recipe, notes=notes,
                                  size_bytes=file_size(run.path), base=plan.base), before)  # fmt: skip

    def _add_version(self, v: Version, before: Version) -> None:
        self.versions.append(v)
        self.versions_changed.emit()
        self.reference = self.versions.index(before)
        self._awaiting = len(self.versions) - 1
        self.switch_to(self._awaiting)

    def suggest(self, target_sqnr_db: float | None, max_layers: int | None, treatment: str = "keep_float") -> Worker | None:
        from inspector.core.suggest import SuggestOptions

        a, v = self.controller.models["A"], self.version(0)  # rank layers of the model the user opened
        if a is None or v is None:
            self._fail("Open the float model (A) and its quantized twin (B) first.")
            return None
        if self.running:
            self._fail("A requantize or suggest run is already going; wait or cancel it.")
            return None
        opts = self.comparison_options()
        sopts = SuggestOptions(samples=opts.samples, seed=opts.seed, inputs=opts.inputs, treatment=treatment, max_layers=max_layers)  # type: ignore[arg-type]
        out = self.folder / file_name(f"v{len(self.versions)} suggested {treatment}")
        w = Worker(suggest_thread, a.path, v.path, target_sqnr_db, sopts, opts, str(out), self._protected(opts), wants_progress=True)
        w.finished.connect(lambda r: self._suggested(r, str(out)))
        return self._start(w, f"Suggesting layers for {Path(a.path).name}")

    def _suggested(self, result, path: str) -> None:
        self.suggestion = result
        self.suggestion_path = path if result.best is not None else None
        self.suggestion_changed.emit(result)

    def apply_suggestion(self) -> bool:
        """The suggested model (already requantized and verified) becomes the next version."""
        s, before = self.suggestion, self.version(self.current)
        if s is None or self.suggestion_path is None or before is None or s.best is None:
            self._fail("No suggested model to apply: run Suggest first.")
            return False
        n = len(self.versions)
        a = self.controller.models["A"]
        self._add_version(Version(n, version_name(n, s.plan, a, "suggest"), self.suggestion_path, s.best.float_path,
                                  "suggested", plan=s.plan, recipe=s.best.recipe, notes=list(s.best.notes) + list(s.notes),
                                  size_bytes=file_size(self.suggestion_path), base=s.plan.base), before)  # fmt: skip
        self.suggestion_path = None
        return True

    def cancel(self) -> None:
        if self.worker is not None:
            self.worker.cancel()

    def _start(self, w: Worker, what: str) -> Worker:
        self.worker = w
        w.progress.connect(lambda f, t: self.progress.emit(f, t) if w is self.worker else None)
        w.failed.connect(lambda msg: self._fail(f"{what} failed: {msg}") if w is self.worker else None)
        w.done.connect(lambda: self._done(w))
        self.running_changed.emit(True, what)
        self.controller.run_task(w, what)
        return w

    def _done(self, w: Worker) -> None:
        if w is self.worker:
            self.worker = None
            self.running_changed.emit(False, "cancelled" if w.is_cancelled else "")

    def _fail(self, message: str) -> None:
        self.failed.emit(message)
        self.window.show_error(message)

    def _protected(self, opts: CompareOptions) -> list[str]:
        a = self.controller.models["A"]
        paths = [v.path for v in self.versions] + ([a.path] if a is not None else [])
        return paths + ([opts.inputs] if opts.inputs else [])

    def output_sqnr(self, i: int) -> float | None:
        v = self.version(i)
        return output_sqnr_db(v.comparison) if v is not None else None
