"""Sessions in the GUI: File > Save session / Open session (`.tqi.json`) and crash recovery.

A session is the serialized `AppState` (`core.state.session.session_from_state`): the open
model paths (with size and hash, so a model changed on disk since is reported), the
comparison's options and sample settings, the selection, the comparison result JSON and the
versions of B. Restoring opens the models, then sets the selection, the options (through the
comparison controller), the versions (through the requantize controller) and the result.
Crash recovery (`start_recovery`, used by `app.run_app`): an autosave after each comparison and
every few minutes; after an abnormal exit the next start offers the autosaved session.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMessageBox
from shiboken6 import isValid

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.core.compare.result import ComparisonResult
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
from inspector.core.tflite.litertlm import split_address
from inspector.core.writing import to_json_text
from inspector.gui.recent import in_resources
from inspector.gui.workers import Worker, guarded

ROLES = {"A": "float", "B": "quant"}
AUTOSAVE_MS = 120_000
SESSION_FILTER = f"Inspector sessions (*{SUFFIX});;All files (*)"


class SessionController(QObject):
    restored = Signal(dict)  # the state, once its models are open and it is applied
    saved = Signal(str)  # path

    def __init__(self, window, source, compare, requantize) -> None:
        super().__init__(window)
        self.window, self.source = window, source
        self.compare, self.requantize = compare, requantize
        self.controller = window.controller
        self.app_state = self.controller.state
        self.path: str | None = None
        self.recovery: CrashRecovery | None = None
        self._last_autosave = ""
        self._autosave_worker: Worker | None = None
        self._autosave_again = False
        self._pending: tuple[dict, set, list[str]] | None = None
        self.act_open = QAction("Open &session…", window)
        self.act_open.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.act_open.triggered.connect(self.choose_open)
        self.act_save = QAction("&Save session…", window)
        self.act_save.setShortcut(QKeySequence.StandardKey.Save)
        self.act_save.triggered.connect(self.choose_save)
        self.timer = QTimer(self)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave)
        source.changed.connect(self.autosave)
        self.controller.models_changed.connect(self.autosave)
        self.controller.state.parity_changed.connect(lambda _r: isValid(self) and self.autosave())

    # ------------------------------------------------------------------ state
    def state(self) -> dict:
        """The session content: the app state, serialized."""
        return session_from_state(self.app_state)

    def save(self, path: str | Path) -> dict:
        p = str(path)
        if not p.endswith(SUFFIX):
            p += SUFFIX
        out = save_session(p, self.state())
        self.path = p
        self.window.statusBar().showMessage(f"Session saved to {p}", 8000)
        self.saved.emit(p)
        return out

    def open(self, path: str | Path) -> bool:
        """Read a session file and restore it (models open in the background); False on a bad file."""
        try:
            state = load_session(path)
        except InspectorError as e:
            self.window.show_error(f"Could not open the session: {e}")
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
                problems.append(f"model {slot}: {changes[role]}")
                if not Path(split_address(m["path"])[0]).is_file():
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

    def _loaded(self, token, worker) -> None:
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
        c = self.controller
        changed = model_changes(state)
        inputs = state.get("inputs") or {}
        if inputs:  # first: its signature decides which subgraph the selection's indices address
            try:
                self.compare.set_options(CompareOptions.from_json(inputs))
            except (InspectorError, TypeError, ValueError) as e:
                problems.append(f"input settings not restored ({e})")
        self._restore_selection(state.get("selection") or {})
        plans = state.get("requantize_plans") or []
        if plans:
            try:
                self.requantize.restore_session_plans(plans)
            except Exception as e:  # noqa: BLE001 - another feature's data: report, keep going
                problems.append(f"requantize plans not restored ({e})")
        comp = (state.get("results") or {}).get("compare")
        if comp:
            if changed:
                problems.append("the saved comparison result was not restored because a model changed; run the comparison again")
            elif c.models["B"] is None:
                problems.append("the saved comparison result was not restored: model B is not open")
            else:
                try:
                    self.source.set_result(ComparisonResult.from_json(comp))
                except (KeyError, TypeError, ValueError) as e:
                    problems.append(f"the saved comparison result is damaged and was not restored ({type(e).__name__}: {e})")
        parity = (state.get("results") or {}).get("parity")
        if parity:
            problems.extend(self._restore_parity(parity, changed))
        if problems:
            self.window.show_error(f"Restored {origin} with problems: " + "; ".join(problems))
        else:
            self.window.statusBar().showMessage(f"Restored {origin}", 8000)
        self.restored.emit(state)

    def _restore_parity(self, saved: dict, changed: dict) -> list[str]:
        """The saved runtime parity of B, if it describes the model B now open; else why not."""
        b = self.controller.models["B"]
        try:
            result = RuntimeParityResult.from_json(saved)
        except (KeyError, TypeError, ValueError) as e:
            return [f"the saved runtime parity is damaged and was not restored ({type(e).__name__}: {e})"]
        if b is None or not same_file(result.model, b.path):
            return ["the saved runtime parity was not restored: its model B is not open"]
        if changed:
            return ["the saved runtime parity was not restored because a model changed; run it again"]
        self.controller.state.set_parity(result)
        return []

    def _restore_selection(self, sel: dict) -> None:
        c = self.controller
        origin = sel.get("origin") if sel.get("origin") in ROLES else "A"
        op, tensor = sel.get(f"op_{origin.lower()}"), sel.get(f"tensor_{origin.lower()}")
        sg = c.subgraph(origin)
        if sg is None:
            return
        if isinstance(op, int) and 0 <= op < len(sg.ops):
            c.select_op(origin, op, tensor=tensor if isinstance(tensor, int) else None)
        elif isinstance(tensor, int) and 0 <= tensor < len(sg.tensors):
            c.select_tensor(origin, tensor)
        if isinstance(sel.get("channel"), int):
            c.set_channel(sel["channel"])

    # ------------------------------------------------------------------ menu intents
    def choose_save(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self.window, "Save session", self.save_start(), SESSION_FILTER)
        if path:
            try:
                self.save(path)
            except InspectorError as e:
                self.window.show_error(f"Could not save the session: {e}")
            else:
                self.window.recent.remember_save_dir(path)

    def save_start(self) -> str:
        """Where Save session proposes to write: this session's file, else the user's save folder."""
        if self.path and not in_resources(self.path):
            return self.path
        return str(Path(self.window.recent.save_dir) / f"session{SUFFIX}")

    def choose_open(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.window, "Open session", self.window.recent.save_dir, SESSION_FILTER)
        if path:
            self.open(path)

    # ------------------------------------------------------------------ crash recovery
    def start_recovery(self, recovery: CrashRecovery | None = None, ask=None) -> Recoverable | None:
        """Mark this instance as running, offer the newest crashed session, start autosaving.
        `ask(rec) -> bool` replaces the question dialog (tests). Returns what was restored."""
        self.recovery = recovery or CrashRecovery()
        try:
            found = self.recovery.start()
        except (OSError, InspectorError) as e:
            self.window.statusBar().showMessage(f"Crash recovery is off: {e}", 10000)
            self.recovery = None
            return None
        self.timer.start()
        restored = None
        for i, rec in enumerate(found):
            if i == 0 and (ask or self._ask_restore)(rec):
                try:
                    state = self.recovery.restore(rec)
                except InspectorError as e:
                    self.window.show_error(f"Could not restore the previous session: {e}")
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
                          f"Restore the session it autosaved at {when}?", parent=self.window)  # fmt: skip
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
        w.failed.connect(guarded(self, lambda msg: self.window.statusBar().showMessage(f"Autosave failed: {msg}", 10000)))
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
