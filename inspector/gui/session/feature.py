"""Sessions in the GUI: File > Save session / Open session (`.tqi.json`) and crash recovery.

A session is the serialized `AppState` (`core.state.session.session_from_state`): the open
model paths (with size and hash, so a model changed on disk since is reported), the
comparison's options and sample settings, the selection, the comparison result JSON and the
versions of B (with their comparisons, current and reference). Restoring opens the models, then
applies the typed parts `core.state.session_restore` reads from the file: the options (through
the comparison controller), the selection, the versions (through the requantize controller), the
result and the runtime parity. Features with state of their own add a part (`add_part(key,
save, restore)`: the Keras feature saves the Keras source of model A and its Keras-vs-B
table under "keras", and reopens them on restore).
Crash recovery (`start_recovery`, used by `app.run_app`): an autosave after each comparison and
every few minutes; after an abnormal exit the next start offers the autosaved session.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox

from inspector.core.errors import InspectorError
from inspector.core.state.app_state import same_file
from inspector.core.state.recovery import CrashRecovery, Recoverable
from inspector.core.state.session import (
    SUFFIX,
    load_session,
    model_changes,
    save_session,
    session_from_state,
)
from inspector.core.state.session_restore import (
    SavedSelection,
    SessionParts,
    session_options,
    session_parts,
)
from inspector.core.state.version_sessions import restore_shelf
from inspector.core.state.versions import Version
from inspector.core.tflite.litertlm import split_address
from inspector.core.viewdata.layer_figures import warm
from inspector.core.writing import to_json_text
from inspector.gui.protocols import Comparison, ModelsController, ResultSource, VersionsKeeper
from inspector.gui.recent import in_resources
from inspector.gui.relay import on_event
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded

ROLES = {"A": "float", "B": "quant"}
AUTOSAVE_MS = 120_000
SESSION_FILTER = f"Inspector sessions (*{SUFFIX});;All files (*)"


def decoded_parts(state: dict, float_path: str | None, quant_path: str | None, opened: Version | None) -> SessionParts:
    """Worker-thread side of restoring a session: its parts decoded, and the figures of the
    comparisons it holds (the shown one, the versions') made, as a comparison's Worker does."""
    parts = session_parts(state, float_path, quant_path, opened)
    shown = (state.get("results") or {}).get("compare")
    cur = parts.versions[parts.current] if parts.versions and parts.current is not None else None
    if cur is not None and cur.comparison is not None and parts.comparison is not None and shown is not None:
        plan = next((d for d in state.get("requantize_plans") or []
                     if isinstance(d, dict) and d.get("path") and same_file(d["path"], cur.path)), None)  # fmt: skip
        if plan is not None and plan.get("comparison") == shown:
            parts.comparison = cur.comparison  # the shown comparison is B's version's: one object, shown once
    for result in (parts.comparison, *(v.comparison for v in parts.versions)):
        warm(result)
    return parts


class SessionFeature(QObject):
    restored = Signal(dict)  # the state, once its models are open and it is applied
    saved = Signal(str)  # path

    def __init__(self, controller: ModelsController, ui: UiServices, source: ResultSource, compare: Comparison,
                 requantize: VersionsKeeper) -> None:
        super().__init__(ui.parent)
        self.ui, self.source = ui, source
        self.compare, self.requantize = compare, requantize
        self.controller = controller
        self.app_state = self.controller.state
        self.path: str | None = None
        self.recovery: CrashRecovery | None = None
        self._last_autosave = ""
        self._autosave_worker: Worker | None = None
        self._autosave_again = False
        self._pending: tuple[dict, set, list[str]] | None = None
        self._decoding: Worker | None = None  # decodes the parts of the session being opened
        self._parts: dict[str, tuple[Callable[[], dict | None], Callable[[dict], None]]] = {}
        self.act_open = QAction("Open &session…", ui.parent)
        self.act_open.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.act_open.triggered.connect(self.choose_open)
        self.act_save = QAction("&Save session…", ui.parent)
        self.act_save.setShortcut(QKeySequence.StandardKey.Save)
        self.act_save.triggered.connect(self.choose_save)
        self.timer = QTimer(self)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave)
        source.changed.connect(self.autosave)
        self.controller.pair_changed.connect(self.autosave)
        on_event(self.controller.state.parity_changed, self, lambda _r: self.autosave())
        self.controller.signature_changed.connect(lambda _k: self.autosave())
        ui.insert_actions("File", "quit", [self.act_open, self.act_save], separator=True)  # Open / Save session, then a separator, before Quit

    # ------------------------------------------------------------------ state

    @property
    def restoring(self) -> bool:
        """True while a session's models are opening (its saved result, or none, is what it shows)."""
        return self._pending is not None

    def add_part(self, key: str, save: Callable[[], dict | None], restore: Callable[[dict], None]) -> None:
        """A feature's own part of the session: `save()` gives the JSON saved under `key` (None:
        nothing to save), `restore(part)` gets it back once the session's models are open."""
        self._parts[key] = (save, restore)

    def state(self) -> dict:
        """The session content: the app state, serialized, and the features' parts."""
        out = session_from_state(self.app_state)
        for key, (save, _restore) in self._parts.items():
            part = save()
            if part is not None:
                out[key] = part
        return out

    def save(self, path: str | Path) -> dict:
        p = str(path)
        if not p.endswith(SUFFIX):
            p += SUFFIX
        out = save_session(p, self.state())
        self.path = p
        self.ui.status(f"Session saved to {p}", 8000)
        self.saved.emit(p)
        return out

    def open(self, path: str | Path) -> bool:
        """Read a session file and restore it (models open in the background); False on a bad file."""
        try:
            state = load_session(path)
        except InspectorError as e:
            self.ui.show_error(f"Could not open the session: {e}")
            return False
        self.path = str(path)
        self.apply(state, f"session {Path(path).name}")
        return True

    # ------------------------------------------------------------------ restore
    def apply(self, state: dict, origin: str = "session") -> None:
        """Open the session's models, then restore selection, inputs, plans and result."""
        problems: list[str] = []
        changes = model_changes(state)
        pending: set = set()
        workers = []
        for slot, role in ROLES.items():
            m = (state.get("models") or {}).get(role)
            if not m:
                self.controller.close_model(slot)
                continue
            if role in changes:
                missing = not Path(split_address(m["path"])[0]).is_file()
                if not (missing and self._reopened_by_part(state, m["path"])):
                    problems.append(f"model {slot}: {changes[role]}")
                if missing:
                    self.controller.close_model(slot)
                    continue
            w = self.controller.open_model(slot, m["path"])
            pending.add(w)
            workers.append(w)
        self._origin = origin
        self._pending = (state, pending, problems)
        token = self._pending
        for w in workers:
            w.done.connect(guarded(self, lambda w=w: self._loaded(token, w)))
        if not workers:
            self._pending = None
            self._finish(state, problems, origin)

    def _loaded(self, token: tuple[dict, set, list[str]], worker: Worker) -> None:
        if self._pending is not token:
            return
        state, pending, problems = token
        pending.discard(worker)
        if worker.error:
            problems.append(worker.error)
        if not pending:
            self._pending = None
            self._finish(state, problems, self._origin)

    def _finish(self, state: dict, problems: list[str], origin: str) -> None:
        """The models are open: decode the session's typed parts in a Worker thread
        (`core.state.session_restore`: its saved comparisons are decoded and their figures made
        there, 45-100 ms of the GUI thread's time before), then apply them."""
        c, st = self.controller, self.app_state
        a, b = c.models["A"], c.models["B"]
        parts = SessionParts()
        session_options(state, parts)
        if parts.options is not None:  # first: its signature decides which subgraph the selection's indices address
            self.compare.set_options(parts.options)
        paths = (a.path if a else None, b.path if b else None)
        w = Worker(decoded_parts, state, *paths, st.version(0))
        self._decoding = w
        w.finished.connect(guarded(self, lambda p: self._apply(w, state, problems, origin, p) if self._open_paths() == paths else None))
        w.failed.connect(guarded(self, lambda msg: self._apply(w, state, [*problems, f"the session could not be read ({msg})"], origin, SessionParts())))
        w.start()

    def _open_paths(self) -> tuple[str | None, str | None]:
        a, b = self.controller.models["A"], self.controller.models["B"]
        return a.path if a else None, b.path if b else None

    def _apply(self, w: Worker, state: dict, problems: list[str], origin: str, parts: SessionParts) -> None:
        """Apply decoded parts, unless another session was opened meanwhile (a model opened
        meanwhile: the caller drops them)."""
        if w is not self._decoding:
            return
        self._decoding = None
        st = self.app_state
        self._restore_selection(parts.selection)
        if parts.versions:
            self.requantize.restore_versions(parts.versions, parts.current, parts.reference, parts.missing_versions)
        restore_shelf(st, state.get("shelved_versions"))  # versions of other pairs, offered when reopened
        if parts.comparison is not None and parts.comparison is not st.comparison:  # not shown already with its version
            self.source.set_result(parts.comparison)
        if parts.parity is not None:
            st.set_parity(parts.parity)
        for key, (_save, restore) in self._parts.items():
            if isinstance(state.get(key), dict):
                restore(state[key])
        problems = problems + parts.problems
        if problems:
            self.ui.show_error(f"Restored {origin} with problems: " + "; ".join(problems))
        else:
            self.ui.status(f"Restored {origin}", 8000)
        self.restored.emit(state)

    @staticmethod
    def _reopened_by_part(state: dict, path: str) -> bool:
        """A missing model A that is a Keras model's cached float twin: the Keras part reopens its source."""
        keras = state.get("keras")
        return (isinstance(keras, dict) and keras.get("float_twin") is not None and same_file(keras["float_twin"], path)
                and Path(keras["source"]).exists())

    def _restore_selection(self, sel: SavedSelection) -> None:
        c = self.controller
        sg = c.subgraph(sel.origin)
        if sg is None:
            return
        if sel.op is not None and 0 <= sel.op < len(sg.ops):
            c.select_op(sel.origin, sel.op, tensor=sel.tensor)
        elif sel.tensor is not None and 0 <= sel.tensor < len(sg.tensors):
            c.select_tensor(sel.origin, sel.tensor)
        if sel.channel is not None:
            c.set_channel(sel.channel)

    # ------------------------------------------------------------------ menu intents
    def choose_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.ui.parent, "Save session", self.save_start(), SESSION_FILTER)
        if path:
            try:
                self.save(path)
            except InspectorError as e:
                self.ui.show_error(f"Could not save the session: {e}")
            else:
                self.ui.recent.remember_save_dir(path)

    def save_start(self) -> str:
        """Where Save session proposes to write: this session's file, else the user's save folder."""
        if self.path and not in_resources(self.path):
            return self.path
        return str(Path(self.ui.recent.save_dir) / f"session{SUFFIX}")

    def choose_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.ui.parent, "Open session", self.ui.recent.save_dir, SESSION_FILTER)
        if path:
            self.open(path)

    # ------------------------------------------------------------------ crash recovery
    def start_recovery(self, recovery: CrashRecovery | None = None,
                       ask: Callable[[Recoverable], bool] | None = None) -> Recoverable | None:
        """Mark this instance as running, offer the newest crashed session, start autosaving.
        `ask(rec) -> bool` replaces the question dialog (tests). Returns what was restored."""
        self.recovery = recovery or CrashRecovery()
        try:
            found = self.recovery.start()
        except (OSError, InspectorError) as e:
            self.ui.status(f"Crash recovery is off: {e}", 10000)
            self.recovery = None
            return None
        self.timer.start()
        restored = None
        for i, rec in enumerate(found):
            if i == 0 and (ask or self._ask_restore)(rec):
                try:
                    state = self.recovery.restore(rec)
                except InspectorError as e:
                    self.ui.show_error(f"Could not restore the previous session: {e}")
                else:
                    self.apply(state, "the session of the previous run (it ended abnormally)")
                    restored = rec
            self.recovery.discard(rec)
        return restored

    def _ask_restore(self, rec: Recoverable) -> bool:
        import datetime as dt

        when = dt.datetime.fromtimestamp(rec.saved_at).strftime("%Y-%m-%d %H:%M")
        box = QMessageBox(QMessageBox.Icon.Question, "Restore previous session?",
                          "The inspector did not exit normally last time (crash or kill).\n\n"
                          f"Restore the session it autosaved at {when}?", parent=self.ui.parent)
        box.setStandardButtons(QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No)
        box.button(QMessageBox.StandardButton.Yes).setText("Restore")
        box.button(QMessageBox.StandardButton.No).setText("Discard")
        return box.exec() == QMessageBox.StandardButton.Yes

    def autosave(self, background: bool = True) -> Worker | None:
        """Save the state for crash recovery if it changed since the last autosave (in a worker:
        fingerprinting a big model reads it once). One write at a time: a change during a write
        is saved right after it. Returns the worker, None if there was nothing to do (yet)."""
        if self.recovery is None:
            return None
        if self._autosave_worker is not None:
            self._autosave_again = True
            return None
        state = self.state()
        if all(v is None for v in state["models"].values()):
            return None
        text = to_json_text(state)
        if text == self._last_autosave:
            return None
        self._last_autosave = text
        w = Worker(self.recovery.autosave, state)
        w.failed.connect(guarded(self, lambda msg: self.ui.status(f"Autosave failed: {msg}", 10000)))
        if not background:
            return w.run_here()
        self._autosave_worker = w
        w.done.connect(guarded(self, self._autosave_done))
        return w.start()

    @property
    def autosave_idle(self) -> bool:
        return self._autosave_worker is None

    def _autosave_done(self) -> None:
        self._autosave_worker = None
        if self._autosave_again:
            self._autosave_again = False
            self.autosave()

    def clean_exit(self) -> None:
        """At a normal quit: stop autosaving, remove this instance's marker and autosave."""
        self.timer.stop()
        if self._autosave_worker is not None:
            self._autosave_worker.cancel()
            self._autosave_worker._finished_event.wait(5)
        if self.recovery is not None:
            try:
                self.recovery.clean_exit()
            except InspectorError:
                pass
            self.recovery = None
