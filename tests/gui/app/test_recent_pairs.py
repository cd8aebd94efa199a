"""File > Open recent lists the pairs opened (issue 35, item 9): it listed single files only, so
going back to a pair meant two picks and a mismatched pair in between. A pair's entry opens both,
as one pair (never the new A with the old B on the way), and the list holds the pairs the pair
check found related, not the mismatched pair met while opening a pair file by file."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.gui_helpers import open_pair_checked


def test_open_recent_lists_pairs_and_reopens_both(qtbot, window, example_pair, fixture_path):
    fa, fb = (str(Path(p).resolve()) for p in (fixture_path("float"), fixture_path("int8")))
    open_pair_checked(qtbot, window, fa, fb)  # a pair is remembered once its check says twins
    ea, eb = (str(Path(p).resolve()) for p in example_pair)
    open_pair_checked(qtbot, window, ea, eb)
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


def test_a_recent_pair_reopens_as_one_pair_and_mismatches_are_not_listed(qtbot, window, example_pair, fixture_path):
    fa, fb = (str(Path(p).resolve()) for p in (fixture_path("float"), fixture_path("int8")))
    ea, eb = (str(Path(p).resolve()) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    open_pair_checked(qtbot, window, ea, eb)  # file by file: (example A, fixture B) was open on the way
    assert window.recent.pairs() == [(ea, eb), (fa, fb)]
    c, pair = window.controller, window.features.pair
    seen: list[tuple[str, ...]] = []
    c.pair_changed.connect(lambda: seen.append(tuple(str(Path(m.path).resolve()) for m in c.models.values() if m is not None)))
    checks = []
    pair.checker.checked.connect(lambda check, _note: checks.append(check))
    window._fill_recent()
    act = next(a for a in window.recent_menu.actions() if a.text() == f"{Path(fa).name} ↔ {Path(fb).name}")
    act.trigger()
    qtbot.waitUntil(lambda: bool(checks) and pair.checker.worker is None, timeout=20_000)
    assert seen == [(fa, fb)]  # one change of pair, straight to the pair chosen
    assert [ch.related for ch in checks] == [True] and not pair.pair_banner.isVisible()
    assert window.recent.pairs() == [(fa, fb), (ea, eb)]
