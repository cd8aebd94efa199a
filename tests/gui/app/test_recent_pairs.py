"""File > Open recent lists the pairs opened (issue 35, item 9): it listed single files only, so
going back to a pair meant two picks and a mismatched pair in between. A pair's entry opens both."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gui_helpers import open_wait


def test_open_recent_lists_pairs_and_reopens_both(qtbot, window, example_pair, fixture_path):
    fa, fb = (str(Path(p).resolve()) for p in (fixture_path("float"), fixture_path("int8")))
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    ea, eb = (str(Path(p).resolve()) for p in example_pair)
    open_wait(qtbot, window, "A", ea)
    open_wait(qtbot, window, "B", eb)
    pairs = window.recent.pairs()
    assert pairs[0] == (ea, eb) and (fa, fb) in pairs
    window._fill_recent()
    acts = [a for a in window.recent_menu.actions() if " ↔ " in a.text()]
    assert acts and acts[0].text() == f"{Path(ea).name} ↔ {Path(eb).name}"
    act = next(a for a in acts if a.text() == f"{Path(fa).name} ↔ {Path(fb).name}")
    assert fa in act.toolTip() and fb in act.toolTip()
    act.trigger()
    c = window.controller
    qtbot.waitUntil(lambda: c.models["A"] is not None and c.models["B"] is not None
                    and (c.models["A"].path, c.models["B"].path) == (fa, fb), timeout=20_000)
    window.recent.clear()
    assert window.recent.pairs() == [] and window.recent.entries() == []
