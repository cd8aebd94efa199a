"""Widgets bound to state, both ways, without echo (glue's echo `connect_*` helpers, napari's
`EventedModel` emitting only on a real change).

A `Binder` ties widgets to the fields of one model (`OptionsModel`: `option(name)`,
`set_option(name, value)` and a Qt signal announcing a change, e.g. `CompareController` over
`AppState`). Each binding connects the widget's change signal to the model's setter and the
model's signal to the widget's setter. One guard, inside the binder, stops the echo: while a
widget's edit is being set, the model's announcement does not write the widgets back; while the
model's value is being shown, the widgets' change signals do not set it again. The model's
setter emits only when the value differs, so a value shown again costs nothing.

    binder = Binder(compare_controller)
    binder.check(panel.isolated, "isolated")
    binder.combo(panel.runtime, "runtime")
    binder.spin(panel.seed, "seed")

`quietly(*widgets)` is the same guard for a view that fills its widgets from what it shows
(refilling a combo, restoring a check): their change signals stay silent meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from PySide6.QtCore import QObject, QSignalBlocker, SignalInstance
from PySide6.QtWidgets import QAbstractButton, QComboBox, QLineEdit, QSpinBox

from inspector.gui.protocols import OptionsModel


@contextmanager
def quietly(*objects: QObject) -> Iterator[None]:
    """Within the block, `objects` emit no signals (a view writing what it shows into its own
    widgets); restored on exit as they were."""
    with ExitStack() as stack:
        for o in objects:
            blocker = QSignalBlocker(o)
            stack.callback(blocker.unblock)
        yield


class Binding:
    """One widget (or several showing one value) bound to one field of the binder's model."""

    def __init__(self, binder: Binder, name: str, read: Callable[[], Any], write: Callable[[Any], None],
                 edited: Callable[[Any], None] | None) -> None:
        self.binder, self.name, self.read, self.write, self.edited = binder, name, read, write, edited

    def push(self) -> None:
        """The widget changed: set the model's field to what it shows."""
        if self.binder.busy:
            return
        value = self.read()
        if value == self.binder.model.option(self.name):
            return  # the model holds it already (e.g. the file source chosen before its path)
        with self.binder.hold():
            self.binder.model.set_option(self.name, value)
            now = self.binder.model.option(self.name)
            if now != value:  # the model refused or normalized it: show what it holds
                self.write(now)
        if self.edited is not None:
            self.edited(value)

    def pull(self) -> None:
        """The model changed: show its value (nothing when the widget shows it already)."""
        value = self.binder.model.option(self.name)
        if self.read() != value:
            with self.binder.hold():
                self.write(value)


class Binder(QObject):
    """Widgets bound to the fields of `model`, with the one re-entrancy guard they share. Give it
    the widgets' parent as `parent`: the model's signal stops reaching it when they are gone."""

    def __init__(self, model: OptionsModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.model = model
        self.bindings: list[Binding] = []
        self.busy = False
        model.options_changed.connect(self._changed)

    def _changed(self, *_args: object) -> None:
        self.pull()

    @contextmanager
    def hold(self) -> Iterator[None]:
        was, self.busy = self.busy, True
        try:
            yield
        finally:
            self.busy = was

    def pull(self) -> None:
        """Show the model's values in every bound widget (not while one of them is being set)."""
        if self.busy:
            return
        for b in self.bindings:
            b.pull()

    def commit(self) -> None:
        """Set every field whose widget shows another value than the model (e.g. a path typed and
        not yet committed with Enter) before the model is used."""
        for b in self.bindings:
            if b.read() != self.model.option(b.name):
                b.push()

    def bind(self, name: str, signals: SignalInstance | tuple[SignalInstance, ...], read: Callable[[], Any],
             write: Callable[[Any], None], edited: Callable[[Any], None] | None = None) -> Binding:
        """Bind field `name`: `signals` announce an edit, `read()` is the value the widgets show,
        `write(value)` shows one; `edited(value)` is called after a user's edit was set."""
        b = Binding(self, name, read, write, edited)
        for s in signals if isinstance(signals, tuple) else (signals,):
            s.connect(lambda *_a: b.push())
        self.bindings.append(b)
        b.pull()
        return b

    # ------------------------------------------------------------------ common widgets
    def check(self, box: QAbstractButton, name: str, edited: Callable[[Any], None] | None = None) -> Binding:
        return self.bind(name, box.toggled, box.isChecked, lambda v: box.setChecked(bool(v)), edited)

    def combo(self, combo: QComboBox, name: str, edited: Callable[[Any], None] | None = None) -> Binding:
        """The combo's item data is the value (an item with data None or "" stands for None)."""
        return self.bind(name, combo.currentIndexChanged, lambda: combo.currentData() or None,
                         lambda v: combo.setCurrentIndex(max(0, combo.findData(v if v is not None else ""))), edited)

    def spin(self, spin: QSpinBox, name: str, edited: Callable[[Any], None] | None = None) -> Binding:
        return self.bind(name, spin.valueChanged, spin.value, lambda v: spin.setValue(int(v)), edited)

    def text(self, line: QLineEdit, name: str, edited: Callable[[Any], None] | None = None) -> Binding:
        """Set on Enter or leaving the field (`editingFinished`); empty is None."""
        return self.bind(name, line.editingFinished, lambda: line.text().strip() or None,
                         lambda v: line.setText(v or ""), edited)
