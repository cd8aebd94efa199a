"""Worker: result, progress, cancel and errors arrive on the GUI thread; the app never crashes."""

from __future__ import annotations

import threading

from PySide6.QtCore import QThread
from PySide6.QtWidgets import QApplication

from inspector.core.errors import ModelFormatError
from inspector.gui.app import make_app
from inspector.gui.workers import Worker


def test_result_and_progress_arrive_on_gui_thread(qtbot):
    make_app()
    seen: list = []
    gui = QApplication.instance().thread()

    def work(n, task):
        for i in range(n):
            task.report((i + 1) / n, f"step {i + 1}")
        return threading.current_thread().name

    w = Worker(work, 4, wants_progress=True)
    w.progress.connect(lambda f, t: seen.append((f, t, QThread.currentThread() is gui)))
    w.start()
    with qtbot.waitSignal(w.finished, timeout=10_000) as blocker:
        pass
    assert blocker.args[0] != threading.current_thread().name  # ran on a pool thread
    assert [s[:2] for s in seen] == [(0.25, "step 1"), (0.5, "step 2"), (0.75, "step 3"), (1.0, "step 4")]
    assert all(s[2] for s in seen)


def test_cancel_stops_at_next_progress_call(qtbot):
    make_app()
    started, release = threading.Event(), threading.Event()
    calls = []

    def work(task):
        started.set()
        release.wait(5)
        for i in range(100):
            task.report(i / 100)
            calls.append(i)
        return "not expected"

    w = Worker(work, wants_progress=True)
    finished = []
    w.finished.connect(finished.append)
    w.start()
    qtbot.waitUntil(started.is_set, timeout=10_000)
    w.cancel()
    with qtbot.waitSignal(w.cancelled, timeout=10_000):  # connected before the work can go on
        release.set()
    assert calls == [] and finished == [] and w.result is None


def test_errors_become_messages(qtbot):
    make_app()

    def bad_file():
        raise ModelFormatError("the file is empty", "/tmp/x.tflite")

    w = Worker(bad_file).start()
    with qtbot.waitSignal(w.failed, timeout=10_000) as blocker:
        pass
    assert blocker.args == ["/tmp/x.tflite: the file is empty"]

    w = Worker(lambda: 1 / 0).start()
    with qtbot.waitSignal(w.failed, timeout=10_000) as blocker:
        pass
    assert blocker.args[0].startswith("internal error: ZeroDivisionError")


def test_qt_side_deleted_mid_run_ends_quietly(qtbot):
    """At shutdown a running worker's Qt object can be destroyed before the work ends: its
    emits must not raise on the pool thread (they used to: 'Signal source has been deleted')."""
    import shiboken6
    from PySide6.QtCore import QThreadPool

    make_app()
    go, reached = threading.Event(), []

    def work(task):
        go.wait(10)
        try:
            task.report(0.5, "half")
        finally:
            reached.append("after progress")
        return 1

    w = Worker(work, wants_progress=True)
    w.start()
    qtbot.waitUntil(lambda: QThreadPool.globalInstance().activeThreadCount() > 0, timeout=5000)
    shiboken6.delete(w)
    go.set()
    assert QThreadPool.globalInstance().waitForDone(10_000)
    assert reached == ["after progress"] and w.is_done  # the progress call ended the work (as a cancel)


def test_handlers_of_a_deleted_owner_are_not_called(qtbot):
    """A controller deleted while its worker still runs (its window closed): the worker's
    signals still arrive, but handlers connected through `guarded` see nothing and raise nothing."""
    import shiboken6
    from PySide6.QtCore import QObject

    from inspector.gui.workers import guarded

    make_app()
    go = threading.Event()
    calls: dict[str, list] = {"gone": [], "alive": []}

    class Owner(QObject):
        def __init__(self, key: str) -> None:
            super().__init__()
            self.key = key

        def handle(self, *args) -> None:
            calls[self.key].append((self.objectName(), args))  # touches the Qt object

    gone, alive = Owner("gone"), Owner("alive")
    w = Worker(lambda task: go.wait(10) and task.report(1.0, "end") or 7, wants_progress=True)
    for owner in (gone, alive):
        w.progress.connect(guarded(owner, lambda f, t, o=owner: o.handle(f, t)))
        w.finished.connect(guarded(owner, lambda r, o=owner: o.handle(r)))
    with qtbot.waitSignal(w.done, timeout=10_000):
        w.start()
        shiboken6.delete(gone)
        go.set()
    assert calls["gone"] == [] and calls["alive"] == [("", (1.0, "end")), ("", (7,))]


def test_a_finished_worker_lets_go_of_its_arguments_and_result(qtbot):
    """Handlers name their worker (`lambda r: self._finished(w, r)`): a cycle through Qt's
    connection that Python's collector cannot see. Once `done` is handled the worker drops its
    arguments, its result and its connections, so they are freed (every finished Worker kept a
    1,500-op model or a graph's styles for good: 55,000 objects more per Apply fix)."""
    import gc
    import weakref

    from PySide6.QtCore import QObject

    from inspector.gui.workers import guarded

    make_app()

    class Payload:
        pass

    made: list[weakref.ref] = []

    def work(arg):
        out = Payload()
        made.append(weakref.ref(out))
        return out

    args = [Payload()]
    arg_ref = weakref.ref(args[0])
    owner = QObject()
    seen: list[str] = []

    def start() -> None:
        w = Worker(work, args.pop())
        w.finished.connect(guarded(owner, lambda r: seen.append(f"{type(r).__name__} from {type(w).__name__}")))
        w.done.connect(guarded(owner, lambda: seen.append(f"done, error {w.error}")))
        w.start()

    start()  # the handlers name `w`: nothing else does
    qtbot.waitUntil(lambda: len(seen) == 2, timeout=10_000)
    qtbot.wait(50)
    gc.collect()
    assert seen == ["Payload from Worker", "done, error None"]  # handlers ran first, with the result
    assert made and made[0]() is None and arg_ref() is None  # then nothing held them
