"""Work that follows an event runs one piece per turn of the event loop (`gui/turns.py`, issue 35):
pieces queued together no longer hold the loop at once, a piece asked for twice runs once with
the newest call, and a deleted owner's piece is dropped. Then the views that use it: the
versions' delta table laid in when shown or read, the root-cause strip as tall with its button
as without."""

from __future__ import annotations

import time

from PySide6.QtCore import QObject, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from inspector.gui.diagnosis.root_cause_strip import RootCauseStrip
from inspector.gui.requantize.versions_view import DeltaTable
from inspector.gui.turns import later, now, queue
from tests.helpers.event_loop_watchdog import EventLoopWatchdog

PIECE_MS = 60.0


def _busy(ms: float) -> None:
    """`ms` of this thread's CPU time (the same on a loaded machine)."""
    end = time.thread_time() + ms / 1000.0
    while time.thread_time() < end:
        pass


def _run_three(qtbot, schedule) -> EventLoopWatchdog:
    owner = QObject()
    ran: list[int] = []
    with EventLoopWatchdog() as dog:
        qtbot.wait(30)
        for i in range(3):
            schedule(owner, i, lambda i=i: (_busy(PIECE_MS), ran.append(i)))
        qtbot.waitUntil(lambda: len(ran) == 3, timeout=5000)
        qtbot.wait(30)
    assert ran == [0, 1, 2]
    return dog


def test_pieces_queued_together_run_in_turns_of_their_own(qtbot):
    together = _run_three(qtbot, lambda _o, _i, fn: QTimer.singleShot(1, fn))  # what the views did
    assert together.longest_cpu_ms >= 2.5 * PIECE_MS, together.report()  # all three in one block
    apart = _run_three(qtbot, lambda o, i, fn: later(o, f"piece {i}", fn))
    assert apart.longest_cpu_ms < 1.6 * PIECE_MS, apart.report()  # one per turn: the loop ticks between


def test_a_piece_asked_for_twice_runs_once_with_the_newest_call(qtbot):
    owner = QObject()
    ran: list[str] = []
    later(owner, "draw", lambda: ran.append("old"))
    later(owner, "other", lambda: ran.append("other"))
    later(owner, "draw", lambda: ran.append("new"))
    assert queue().pending(owner, "draw")
    qtbot.waitUntil(lambda: len(ran) == 2, timeout=2000)
    qtbot.wait(20)
    assert ran == ["new", "other"]  # its place kept, its newest call run


def test_a_deleted_owners_piece_is_dropped(qtbot):
    owner, other = QWidget(), QObject()
    ran: list[str] = []
    later(owner, "draw", lambda: ran.append("deleted"))
    later(other, "draw", lambda: ran.append("kept"))
    owner.deleteLater()
    qtbot.waitUntil(lambda: ran == ["kept"], timeout=2000)
    qtbot.wait(20)
    assert ran == ["kept"]


def test_a_reader_runs_a_queued_piece_at_once_and_only_once(qtbot):
    owner = QObject()
    ran: list[str] = []
    later(owner, "delta", lambda: ran.append("delta"))
    later(owner, "other", lambda: ran.append("other"))
    now(owner, "delta")
    assert ran == ["delta"] and not queue().pending(owner, "delta") and queue().pending(owner, "other")
    now(owner, "delta")  # nothing queued: nothing runs
    qtbot.waitUntil(lambda: ran == ["delta", "other"], timeout=2000)
    qtbot.wait(20)
    assert ran == ["delta", "other"]


def test_a_run_ending_does_not_repaint_the_window_at_once(qtbot):
    """QProgressBar repaints itself synchronously on a visible change, and with it whatever else of
    the window was pending (37-41 ms on a 1,500-op pair when a comparison ended)."""
    from PySide6.QtCore import QEvent

    from inspector.gui.views.run_row import RunRow

    row = RunRow("Run", bar_beside=True)
    qtbot.addWidget(row)
    row.show()
    qtbot.waitExposed(row)
    row.set_running(True)
    row.set_progress(0.5, "half")
    qtbot.wait(50)
    paints: list[int] = []

    class Count(QObject):
        def eventFilter(self, obj, ev):  # noqa: N802 - Qt's name
            if ev.type() == QEvent.Type.Paint:
                paints.append(1)
            return False

    counter = Count()
    row.bar.installEventFilter(counter)
    row.set_running(False)
    assert paints == [] and row.bar.value() == 0  # none within the call
    qtbot.waitUntil(lambda: len(paints) > 0, timeout=2000)  # painted with the window's next paint


class _Row:
    def __init__(self, i: int) -> None:
        self.op_index, self.float_op_index, self.tensor_name, self.edit = i, i, f"layer_{i}", ""
        self.before_db, self.after_db, self.delta_db = 20.0 + i, 21.5 + i, 1.5
        self.op_type, self.before_dtype, self.after_dtype = "CONV_2D", "int8", "int8"


def test_delta_rows_are_laid_in_when_the_table_is_shown_or_read(qtbot):
    tabs = QTabWidget()
    qtbot.addWidget(tabs)
    tabs.addTab(QWidget(), "front")
    table = DeltaTable()
    tabs.addTab(table, "versions")
    tabs.show()
    qtbot.waitExposed(tabs)
    table.set_rows([_Row(i) for i in range(1500)], QFont(), edits=False)
    assert table.delta_model.rowCount() == 0  # out of sight: nothing laid in on this event
    tabs.setCurrentWidget(table)
    qtbot.wait(20)
    assert table.delta_model.rowCount() == 1500  # shown: laid in
    assert table.columnWidth(3) >= table.fontMetrics().horizontalAdvance(table.text(10, 3))  # sized once laid in

    table.set_rows([_Row(i) for i in range(7)], QFont(), edits=False)
    assert table.delta_model.rowCount() == 1500  # shown: in a turn of its own, not within the event
    qtbot.waitUntil(lambda: table.delta_model.rowCount() == 7, timeout=2000)

    tabs.setCurrentIndex(0)
    table.set_rows([_Row(i) for i in range(3)], QFont(), edits=True)
    assert table.delta_model.rowCount() == 7  # hidden again: the new rows wait
    assert table.rowCount() == 3 and table.text(2, 1) == "layer_2"  # reading them lays them in
    assert not table.isColumnHidden(2)  # the Edit column of an edited version


def test_the_root_cause_strip_is_as_tall_without_its_button(qtbot):
    """A result with a fix shows the button, the next one without hides it: the window's layout
    (and its 1,500-row lists) does not move for that (it was 28 px with the button, 20 without)."""
    box = QWidget()
    qtbot.addWidget(box)
    lay = QVBoxLayout(box)
    strip = RootCauseStrip()
    lay.addWidget(strip)
    lay.addWidget(QLabel("the rest of the window"), 1)
    box.resize(1200, 400)
    box.show()
    qtbot.waitExposed(box)
    strip.setVisible(True)
    strip.label.setText("Root cause: op 3 CONV_2D")
    strip.button.setVisible(True)
    qtbot.wait(20)
    with_button = strip.height()
    strip.button.setVisible(False)
    qtbot.wait(20)
    assert strip.height() == with_button >= strip.button.sizeHint().height()
