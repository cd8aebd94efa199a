"""After requantizing to v1, opening another model A brings back the model B the user opened
(v0) instead of keeping the cached v1 as model B and listing it as "v0 original int8"."""

from __future__ import annotations

import shutil
from pathlib import Path

from inspector.core.state.app_state import same_file
from inspector.core.state.versions import Version
from tests.helpers.gui_helpers import open_pair_checked, open_wait


def test_another_a_brings_back_the_opened_b(qtbot, window, example_pair, fixture_path, tmp_path):
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    rq, c = window.features.requantize, window.controller
    v1 = str(tmp_path / "v1_edit.tflite")  # as a requantize run leaves it in the versions folder
    shutil.copyfile(fb, v1)
    rq.state.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        rq.switch_to(1)
    assert same_file(c.models["B"].path, v1)

    other_a = str(fixture_path("float"))  # another float model
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        open_wait(qtbot, window, "A", other_a)
    qtbot.waitUntil(lambda: same_file(c.models["B"].path, fb), timeout=20000)
    assert same_file(c.models["A"].path, other_a)
    assert [v.path for v in rq.versions] == [c.models["B"].path] and same_file(rq.versions[0].path, fb)
    assert rq.versions[0].kind == "opened"


def test_versions_made_here_survive_another_a_and_come_back_with_their_pair(qtbot, window, example_pair, fixture_path, tmp_path):
    """Issue 35, item 5: Example -> a version v1 -> open another model A -> open the example's A
    again: the versions list offers v1 again (it dropped to v0, v1 lost with only a status line)."""
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    rq, c = window.features.requantize, window.controller
    v1 = str(tmp_path / "v1_edit.tflite")
    shutil.copyfile(fb, v1)
    rq.state.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        rq.switch_to(1)
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        open_wait(qtbot, window, "A", str(fixture_path("float")))
    qtbot.waitUntil(lambda: same_file(c.models["B"].path, fb), timeout=20000)
    assert len(rq.versions) == 1  # the other pair's own v0

    open_wait(qtbot, window, "A", fa)  # the example's A again, its B open: its versions are back
    qtbot.waitUntil(lambda: len(rq.versions) == 2, timeout=20000)
    assert [Path(v.path).name for v in rq.versions] == [Path(fb).name, Path(v1).name]
    assert rq.versions[1].name == "v1 edit" and rq.state.current == 0 and same_file(c.models["B"].path, fb)
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        rq.switch_to(1)  # and it is usable: model B becomes v1
    assert same_file(c.models["B"].path, v1)


def test_another_version_of_b_keeps_the_selected_layer(qtbot, window, example_pair, tmp_path):
    """Issue 35, item 9: switching model B to another version (Apply fix does) cleared the
    selection; the selected layer stays selected, found again by its tensor's name."""
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    rq, c = window.features.requantize, window.controller
    v1 = str(tmp_path / "v1_edit.tflite")
    shutil.copyfile(fb, v1)
    rq.state.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    c.select_op("B", 4)
    name = c.models["B"].main.tensors[c.models["B"].main.ops[4].outputs[0]].name
    with qtbot.waitSignal(c.pair_changed, timeout=20000):
        rq.switch_to(1)
    assert same_file(c.models["B"].path, v1)
    sel = c.selection
    assert sel.op("B") == 4 and c.models["B"].main.tensors[c.models["B"].main.ops[4].outputs[0]].name == name
    assert window.panes["B"].selected_op() == 4


def test_a_version_with_the_same_ops_keeps_the_graph_drawn(qtbot, window, example_pair, tmp_path):
    """Apply fix on a 1,500-op model rebuilt 1,500 graph items; a version whose edit kept the ops
    (re-calibration, weights) now takes over the items drawn, with its own tensors (tooltips)."""
    fa, fb = (str(p) for p in example_pair)
    g = window.features.graph
    with qtbot.waitSignal(g.laid_out, timeout=20000):
        open_pair_checked(qtbot, window, fa, fb)
    rq, c = window.features.requantize, window.controller
    canvas = g.view.canvas["B"]
    items, before = list(canvas.items_by_id), canvas.graph
    v1 = str(tmp_path / "v1_edit.tflite")
    shutil.copyfile(fb, v1)
    rq.state.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(g.laid_out, timeout=20000):
        rq.switch_to(1)
    assert same_file(c.models["B"].path, v1)
    assert canvas.graph is g.graphs["B"] and canvas.graph is not before  # the new model's graph...
    assert canvas.items_by_id == items and all(it.node is n for it, n in zip(items, canvas.graph.nodes, strict=True))  # ...on the same items
