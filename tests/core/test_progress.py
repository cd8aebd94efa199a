"""The one progress/cancel protocol: reports, spans, cancel, the no-op default."""

from __future__ import annotations

import pytest

from inspector.core.errors import Cancelled
from inspector.core.progress import NO_TASK, TaskState, as_task


def test_report_span_and_cancel():
    seen = []
    t = TaskState(lambda f, m: seen.append((f, m)))
    t.report(0.5, "half")
    t.report(None, "busy")
    stage = t.span(0.2, 0.6, "stage: ")
    stage.report(0.0, "a")
    stage.report(0.5, "b")
    stage.report(2.0, "clamped")
    assert seen == [(0.5, "half"), (None, "busy"), (0.2, "stage: a"), (pytest.approx(0.4), "stage: b"), (0.6, "stage: clamped")]
    stage.cancel()  # a stage's cancel cancels the whole task
    assert t.cancelled and stage.cancelled
    with pytest.raises(Cancelled):
        t.report(0.7, "after cancel")
    with pytest.raises(Cancelled):
        stage.check()
    assert len(seen) == 5


def test_external_flag_and_no_task():
    flag = []
    t = TaskState(is_cancelled=lambda: bool(flag))
    t.check()
    flag.append(1)
    with pytest.raises(Cancelled):
        t.check()
    NO_TASK.cancel()
    NO_TASK.report(0.3, "ignored")
    NO_TASK.check()
    assert not NO_TASK.cancelled and as_task(None) is NO_TASK and as_task(t) is t
