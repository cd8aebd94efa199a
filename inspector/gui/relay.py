"""The one place where `AppState`'s events reach Qt: `relay(event, signal, owner)` emits a Qt
signal, `on_event(event, owner, fn)` calls a method of a Qt object.

Controllers announce a change of models, selection or versions only by relaying the `AppState`
event that made it; they never emit such a signal by hand after calling the state, and no GUI
module connects to an `AppState` event itself (tests/gui/contracts/test_gui_contract.py). A relay outlives
nothing: once `owner` is deleted, the event is ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, SignalInstance
from shiboken6 import isValid

from inspector.core.events import Event


def relay(event: Event, signal: SignalInstance, owner: QObject, *, args: bool = True) -> None:
    """Emit `signal` each time `event` fires (with the event's arguments unless `args` is False)."""

    def forward(*a: Any) -> None:
        if isValid(owner):
            signal.emit(*a) if args else signal.emit()

    event.connect(forward)


def on_event(event: Event, owner: QObject, fn: Callable[..., Any]) -> None:
    """Call `fn` with the event's arguments each time `event` fires, while `owner` exists (for
    work that must run at the event itself, in the order of connection, e.g. before a signal
    relayed later)."""

    def forward(*a: Any) -> None:
        if isValid(owner):
            fn(*a)

    event.connect(forward)
