"""After requantizing to v1, opening another model A brings back the model B the user opened
(v0) instead of keeping the cached v1 as model B and listing it as "v0 original int8"."""

from __future__ import annotations

import shutil

from inspector.core.state.app_state import same_file
from inspector.core.state.versions import Version
from tests.helpers.gui_helpers import open_pair_checked, open_wait


def test_another_a_brings_back_the_opened_b(qtbot, window, example_pair, fixture_path, tmp_path):
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    rq, c = window.requantize, window.controller
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
