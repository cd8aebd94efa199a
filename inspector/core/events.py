"""`Event`: the plain callback list core objects announce their changes with (never Qt).

It sits at the bottom of core (imports nothing of it) so that any layer may announce changes:
`state.AppState`'s events and `requantize.draft.PlanDraft.changed` are both `Event`s, and the GUI
reaches them only through `gui/relay.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Event:
    """A tiny signal: `connect(fn)`, `disconnect(fn)`, `emit(*args)` calls every fn in order."""

    def __init__(self) -> None:
        self._subscribers: list[Callable[..., Any]] = []

    def connect(self, fn: Callable[..., Any]) -> None:
        self._subscribers.append(fn)

    def disconnect(self, fn: Callable[..., Any]) -> None:
        self._subscribers.remove(fn)

    def emit(self, *args: Any) -> None:
        for fn in list(self._subscribers):
            fn(*args)
