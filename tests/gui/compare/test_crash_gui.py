"""Issue 7 in the GUI: the comparison's worker process is SIGKILLed mid-run -> the error names
the models and the step, the window stays usable, the next run works; a custom-op model that
LiteRT cannot run gives a clear error."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from inspector.core.compare.comparison import CompareOptions
from inspector.core.runtime import worker as isolation
from inspector.core.samples.settings import SampleSettings
from tests.helpers.gui_helpers import open_wait

RUN_MS = 120_000


def _compare(window):
    return window.features.compare


def _click_op(win, slot: str, op: int) -> None:
    view = win.panes[slot].op_view
    sm = view.selectionModel()
    sm.setCurrentIndex(win.panes[slot].ops.index(op, 0), sm.SelectionFlag.ClearAndSelect | sm.SelectionFlag.Rows)


def test_worker_killed_mid_run(qtbot, window, example_pair, fixture_path):
    fp, qp = example_pair
    open_wait(qtbot, window, "A", fp)
    open_wait(qtbot, window, "B", qp)
    compare = _compare(window)
    progress = []
    compare.progress.connect(lambda f, t: progress.append((f, t)))
    failures = []
    compare.failed.connect(failures.append)
    starts = isolation.default_worker().starts
    compare.run(CompareOptions(samples=SampleSettings(count=100_000), threads=1))  # long enough to be killed mid-run
    qtbot.waitUntil(lambda: len(progress) >= 2 and isolation.default_worker().pid is not None, timeout=RUN_MS)
    pid = isolation.default_worker().pid
    assert isolation.default_worker().starts >= starts  # the run is in a worker process, not ours
    assert pid != os.getpid()
    with qtbot.waitSignal(compare.finished, timeout=RUN_MS):
        os.kill(pid, signal.SIGKILL)
    (msg,) = failures
    assert "SIGKILL" in msg and "step 'comparing" in msg
    assert str(fp) in msg and str(qp) in msg
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert msg in window.banner.text
    assert compare.result is None and not compare.running

    # The window still responds: select a layer (op math and audit follow), open another model.
    mq = window.controller.models["B"]
    conv = next(op.index for op in mq.main.ops if op.type == "CONV_2D")
    _click_op(window, "B", conv)
    assert window.controller.selection.op_b == conv
    assert window.features.opmath.op_math_panel.math.op_index == conv
    open_wait(qtbot, window, "B", fixture_path("int8"))
    assert Path(window.controller.models["B"].path).name == "int8.tflite"

    # The next run starts a fresh worker and succeeds.
    open_wait(qtbot, window, "B", qp)
    with qtbot.waitSignal(compare.result_changed, timeout=RUN_MS) as sig:
        compare.run(CompareOptions(samples=SampleSettings(count=2), threads=1))
    result = sig.args[0]
    assert result is not None and result.samples == 2 and len(result.layers) > 5
    assert isolation.default_worker().pid not in (None, pid)
    assert window.features.compare_features.source.result() is result  # op math / audit / export / session see it


def test_custom_op_model_shows_clear_error(qtbot, window, fixture_path):
    fp, cp = fixture_path("float"), fixture_path("custom_op")
    open_wait(qtbot, window, "A", fp)
    open_wait(qtbot, window, "B", cp)
    compare = _compare(window)
    with qtbot.waitSignal(compare.failed, timeout=RUN_MS) as sig:
        compare.run(CompareOptions(samples=SampleSettings(count=2), threads=1))
    msg = sig.args[0]
    assert str(cp) in msg and "custom op 'MyCustomSoftmax'" in msg and "not built into LiteRT" in msg
    qtbot.waitUntil(lambda: window.banner.isVisible(), timeout=5000)
    assert msg in window.banner.text
    # The model is still inspectable: its custom op has op math ("float") and an audit.
    _click_op(window, "B", len(window.controller.models["B"].main.ops) - 1)
    assert window.features.opmath.op_math_panel.math.op_type == "MyCustomSoftmax"
    # the audit ran on B alone (the comparison failed): the same findings as an independent audit
    from inspector.core.review.audit import audit_model

    expected = audit_model(window.controller.models["B"])
    assert window.features.review.findings == expected  # a list (here empty): the audit ran, unlike None
    assert Path(cp).name in window.features.review.audit_view.summary.text()
