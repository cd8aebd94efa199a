"""Issue 19 §2 at 1280×800: the window fits the screen, both tables of a model pane show several
rows, the Requantize tab keeps its tables when texts grow, Suggest's text scrolls."""

from __future__ import annotations

from PySide6.QtCore import QSettings

from inspector.gui.app import make_app
from inspector.gui.main_window import MainWindow
from inspector.gui.views.sizing import window_size
from tests.helpers.gui_helpers import open_wait

LONG = ("op 12 of model B cannot be edited: " + "a very long reason that goes on " * 30).strip()


def test_window_opens_inside_the_available_screen(qtbot, tmp_path):
    assert window_size(1280, 800) == (1264, 752)  # the laptop: its available area
    assert window_size(1920, 1080) == (1728, 972) and window_size(2560, 1440) == (2304, 1296)  # issue 35: 90 % of a larger screen, not 1400×900
    make_app()
    win = MainWindow(settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    area = win.screen().availableGeometry()  # 800×800 on the offscreen platform
    assert win.width() <= area.width() and win.height() <= area.height(), (win.size(), area)


def test_tables_keep_their_rows_at_1280x800(qtbot, window, example_pair):
    window.resize(1280, 800)
    open_wait(qtbot, window, "A", example_pair[0])
    open_wait(qtbot, window, "B", example_pair[1])
    qtbot.wait(50)
    for slot in ("A", "B"):
        ops, tensors = window.panes[slot].table_rows_shown()
        assert ops >= 4 and tensors >= 4, (slot, ops, tensors)  # the tensor tables showed 2
    panel = window.features.requantize_panel
    window.tabs.setCurrentWidget(panel)
    qtbot.wait(50)
    v = panel.versions.table
    assert v.viewport().height() // v.verticalHeader().defaultSectionSize() >= 4
    ed = panel.editor
    before = ed.table.height()
    ed.status.setText(LONG)
    qtbot.wait(50)
    assert ed.table.height() == before  # the plan table no longer shrinks as the status grows
    assert ed.status.text() == LONG and ed.status.toolTip() == LONG
    assert ed.status.shown_text().endswith("…") and ed.status.height() <= 2 * ed.status.fontMetrics().lineSpacing() + 8
    assert ed.run_button.isVisible() and ed.run_button.mapTo(window, ed.run_button.rect().bottomLeft()).y() < window.height()


def test_suggest_text_scrolls_instead_of_being_cut(qtbot, window):
    window.resize(1280, 800)
    panel = window.features.requantize_panel
    window.tabs.setCurrentWidget(panel)
    panel.middle_tabs.setCurrentWidget(panel.suggest)
    panel.suggest.set_result("\n".join(f"{k}. keep float on op {k} conv{k}: +0.50 dB" for k in range(60)), False)
    qtbot.wait(50)
    bar = panel.suggest.result_scroll.verticalScrollBar()
    assert bar.maximum() > 0 and bar.isVisible()


def test_long_error_stays_inside_the_inputs_panel(qtbot, window):
    """Issue 19 §3: a long failure (e.g. an .npz layout error naming every key) is cut to two
    lines with '…' inside the panel, whole in the tooltip; the panel does not widen."""
    window.resize(1280, 800)
    panel = window.features.compare_features.inputs
    window.tabs.setCurrentWidget(window.features.compare_features.plot.parentWidget().parentWidget())
    width = panel.minimumSizeHint().width()
    message = "Failed: samples.npz: no array for input 'image'; the file has " + ", ".join(f"'x{i}'" for i in range(200))
    panel.set_running(False, message)
    qtbot.wait(20)
    st = panel.status
    assert st.text() == message and st.toolTip() == message and st.shown_text().endswith("…")
    assert st.height() <= 2 * st.fontMetrics().lineSpacing() + 8
    assert panel.minimumSizeHint().width() == width


def test_rich_text_too_long_for_its_lines_is_cut_whole_not_mid_line(qtbot):
    """The versions' summary (rich text) at 1280×800 grew to a fourth line, drawn cut in half under
    the third: a capped label shows rich text that does not fit as plain text cut with "…"."""
    from inspector.gui.views.sizing import CappedLabel

    make_app()
    short, long = "<b>v0</b> → <b>v1</b>: output SQNR 19.69 dB", "<b>v0</b> → <b>v1</b>: " + "edited: op 2 equalized, " * 20
    label = CappedLabel(short, lines=3)
    qtbot.addWidget(label)
    label.resize(400, label.maximumHeight())
    label.show()
    label.setText(short)
    assert label.shown_text() == short  # fits: kept rich
    label.setText(long)
    shown = label.shown_text()
    assert label.text() == long and label.toolTip() == long
    assert shown.endswith("…") and "<b>" not in shown and shown.startswith("v0 → v1: edited")
    assert label.heightForWidth(400) <= 3 * label.fontMetrics().lineSpacing() + 8
