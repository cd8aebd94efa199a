"""Issue 27 §10: at 1920×1080 the model panes get a fair share (the op lists showed 8 rows, the
tabs took the rest), at 1280×800 nothing changes; a window geometry saved on a larger screen is
fitted into the available one; a restored splitter that leaves the op lists under 3 rows (or a
pane collapsed) falls back to the default shares."""

from __future__ import annotations

from inspector.gui.app import make_app
from inspector.gui.main_window import MainWindow
from tests.helpers.gui_helpers import open_wait


def _rows_seen(pane) -> int:
    """Whole op rows inside the op table's viewport, counted with rowAt."""
    v = pane.op_view
    h = v.viewport().height()
    row = v.verticalHeader().defaultSectionSize()
    whole = [r for r in {v.rowAt(y) for y in range(0, h, max(1, row // 2))} if r >= 0 and v.rowViewportPosition(r) + row <= h]
    return len(whole)


def _open(qtbot, win, cnn_pair) -> None:
    open_wait(qtbot, win, "A", cnn_pair[0])
    open_wait(qtbot, win, "B", cnn_pair[1])
    qtbot.wait(50)


def _new_window(qtbot, settings, w: int, h: int) -> MainWindow:
    make_app()
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(w, h)
    win.show()
    return win


def test_op_lists_show_twelve_rows_at_1920x1080(qtbot, window, cnn_pair):
    window.resize(1920, 1080)
    _open(qtbot, window, cnn_pair)
    for slot in ("A", "B"):
        pane = window.panes[slot]
        assert pane.ops.rowCount() >= 13
        assert _rows_seen(pane) >= 12, (slot, _rows_seen(pane), window.main_splitter.sizes())
        assert pane.table_rows_shown()[1] >= 7  # the tensor table keeps its rows
    assert window.tabs.height() >= 440  # the plots keep a good share


def test_nothing_changes_at_1280x800(qtbot, window, cnn_pair):
    window.resize(1280, 800)
    _open(qtbot, window, cnn_pair)
    top, tabs = window.main_splitter.sizes()
    assert top == round((top + tabs) * 4 / 9)  # the share it always had at this size
    for slot in ("A", "B"):
        pane = window.panes[slot]
        assert _rows_seen(pane) >= 4 and pane.table_rows_shown()[1] >= 4


def test_a_dragged_handle_stays_where_the_user_put_it(qtbot, window, cnn_pair):
    window.resize(1920, 1080)
    _open(qtbot, window, cnn_pair)
    window.main_splitter.moveSplitter(300, 1)  # the user drags (emits splitterMoved)
    qtbot.wait(20)
    window.resize(1900, 1060)
    qtbot.wait(20)
    assert abs(window.main_splitter.sizes()[0] - 300) < 30


def test_geometry_saved_on_a_larger_screen_fits_the_available_one(qtbot, settings):
    win = _new_window(qtbot, settings, 1400, 900)
    win.setGeometry(2500, 1500, 3000, 2000)  # e.g. on a 4K monitor
    qtbot.wait(20)
    win.save_state()
    win.close()
    win2 = MainWindow(settings=settings)
    qtbot.addWidget(win2)
    win2.show()
    qtbot.wait(50)
    area = win2.screen().availableGeometry()  # 800×800 on the offscreen platform
    assert area.contains(win2.frameGeometry()), (win2.frameGeometry(), area)


def _reopened(qtbot, settings) -> MainWindow:
    win = MainWindow(settings=settings)  # the geometry it restores fits the offscreen screen
    qtbot.addWidget(win)
    win.show()
    qtbot.wait(50)
    return win


def test_restored_splitters_that_hide_the_op_lists_fall_back_to_the_default(qtbot, settings, cnn_pair):
    win = _new_window(qtbot, settings, 780, 720)
    total = sum(win.main_splitter.sizes())
    win.main_splitter.setSizes([40, total - 40])  # op lists of no row
    win.pane_splitter.setSizes([0, sum(win.pane_splitter.sizes())])  # A collapsed
    win.save_state()
    win.close()
    win2 = _reopened(qtbot, settings)
    _open(qtbot, win2, cnn_pair)
    for slot in ("A", "B"):
        assert _rows_seen(win2.panes[slot]) >= 3, (slot, win2.main_splitter.sizes())
    assert min(win2.pane_splitter.sizes()) > 0.4 * sum(win2.pane_splitter.sizes())
    from inspector.gui.views.sizing import pane_share

    top, tabs = win2.main_splitter.sizes()
    assert abs(top - pane_share(top + tabs, win2._panes_wanted())) <= 1  # the default share


def test_a_usable_restored_split_is_kept(qtbot, settings):
    win = _new_window(qtbot, settings, 780, 720)
    total = sum(win.main_splitter.sizes())
    win.main_splitter.setSizes([total - 200, 200])  # a tall pane, dragged there
    win.save_state()
    win.close()
    win2 = _reopened(qtbot, settings)
    assert abs(win2.main_splitter.sizes()[0] - (total - 200)) < 30, (win2.main_splitter.sizes(), total)
