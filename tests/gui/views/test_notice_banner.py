"""The notice banners above the panes (`gui/views/status.ErrorBanner`)."""

from __future__ import annotations

from inspector.gui.views.status import ErrorBanner


def test_a_notice_shown_again_keeps_its_state(qtbot):
    """Each result re-states the random-samples notice: the same text shown again neither lays
    the window out again nor folds a notice the user unfolded."""
    banner = ErrorBanner()
    qtbot.addWidget(banner)
    banner.show_message("line one\nline two")
    banner.toggle()
    assert banner.expanded
    banner.show_message("line one\nline two")
    assert banner.expanded and banner.text == "line one\nline two"
    banner.show_message("another")
    assert not banner.expanded
