"""The requantize workflow of one window, Qt-free: the plan draft, Suggest's result, the run
awaiting its comparison, and the pair (A, v0) the versions were made for.

`AppState.requantize` holds one (sessions do not save it); the versions themselves stay in
`AppState` (`versions`, `current`, `reference`). The GUI's requantize controller calls the
methods and relays the events; the plan editor renders `draft` (`requantize.draft.PlanDraft`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from inspector.core.events import Event
from inspector.core.requantize.draft import PlanDraft


@dataclass(frozen=True)
class Suggestion:
    """Suggest's result (`SuggestResult` or `SurgicalSuggestResult`), the suggested model's file
    (None: nothing to apply, or applied already), the version Suggest worked on, and where its
    SQNR was measured (an objective pattern; None: the model output)."""

    result: Any
    path: str | None
    source: int | None
    objective: str | None


class RequantizeFlow:
    def __init__(self) -> None:
        self.draft = PlanDraft()
        self.suggestion: Suggestion | None = None
        self.pending: int | None = None  # the version whose comparison completes a run
        self.pair: tuple[str, str] | None = None  # (A, v0) of the versions shown
        self.made: list[str] = []  # the files of the versions made from v0 of that pair
        self._asked: tuple[int | None, str | None] = (None, None)  # Suggest running: (source, objective)
        self.draft_changed = self.draft.changed  # ()
        self.suggestion_changed = Event()  # (result | None)
        self.pending_changed = Event()  # (version | None)

    # ------------------------------------------------------------------ the pair
    def pair_moved(self, pair: tuple[str, str] | None) -> tuple[tuple[str, str] | None, list[str]] | None:
        """Another pair (or none) is open: what was said and awaited for the old one goes.
        Returns the old pair and the files made for it (None: the pair is the same)."""
        if pair == self.pair:
            return None
        old = (self.pair, self.made)
        self.pair, self.made = pair, []
        self.await_version(None)
        self.set_suggestion(None)
        return old

    def versions_made(self, v0: tuple[str, str] | None, paths: list[str]) -> None:
        """The files of the versions after v0, when they belong to the pair shown."""
        if v0 is not None and v0 == self.pair:
            self.made = list(paths)

    # ------------------------------------------------------------------ runs
    def await_version(self, i: int | None) -> None:
        """Version `i`'s comparison completes the run (None: nothing awaited)."""
        if i != self.pending:
            self.pending = i
            self.pending_changed.emit(i)

    def compared(self, i: int | None) -> bool:
        """Version `i`'s comparison is in: True when it completes the awaited run."""
        if i is None or i != self.pending:
            return False
        self.await_version(None)
        return True

    # ------------------------------------------------------------------ suggest
    def suggest_started(self, source: int | None, objective: str | None) -> None:
        self._asked = (source, objective)

    def suggested(self, result: Any, path: str) -> None:
        """Suggest's result arrived (its file only when it found a model to apply)."""
        source, objective = self._asked
        self.set_suggestion(Suggestion(result, path if result.best is not None else None, source, objective))

    def suggestion_applied(self) -> None:
        """The suggested model became a version: the result stays shown, the file is not offered again."""
        if self.suggestion is not None:
            self.suggestion = replace(self.suggestion, path=None)

    def set_suggestion(self, s: Suggestion | None) -> None:
        self.suggestion = s
        self.suggestion_changed.emit(None if s is None else s.result)
