"""GUI test helpers: a main window with its own temporary QSettings, and waiting for loads."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.gui.app import make_app
from inspector.gui.main_window import MainWindow


@pytest.fixture(autouse=True, scope="session")
def collections_on_the_gui_thread():
    """As in the app (every main window turns this on): cyclic collections run on the GUI thread's
    timer only, never on a Worker thread (which could destroy a garbage widget there: a deadlock
    with the GUI thread). From the first GUI test on, for all of them; automatic again after."""
    from inspector.gui.interpreter import collect_automatically_again, collect_on_a_gui_timer

    make_app()
    collect_on_a_gui_timer()
    yield
    collect_automatically_again()


@pytest.fixture
def settings(tmp_path) -> QSettings:
    """Never the user's settings: an ini file in the test's temporary folder. The example pair's
    automatic first comparison is off (tests run their own, with their own samples);
    tests/gui/example/test_first_hour.py turns it on."""
    s = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    s.setValue("compare/auto_run_example", False)
    return s


@pytest.fixture
def window(qtbot, settings) -> MainWindow:
    make_app()
    win = MainWindow(settings=settings)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    return win


@pytest.fixture
def app_window(qtbot, settings) -> MainWindow:
    """The window as the app makes it (`gui.app.create_window`): the objects made up to then
    frozen out of the cyclic collector, as in the app (the freeze watchdogs measure the app).
    Unfrozen afterwards: the rest of the test process collects as before."""
    import gc

    from inspector.gui.app import create_window

    make_app()
    gc.unfreeze()
    win = create_window(settings=settings)
    qtbot.addWidget(win)
    win.resize(1400, 900)
    win.show()
    yield win
    gc.unfreeze()


@pytest.fixture(autouse=True)
def versions_in_tmp(tmp_path, monkeypatch):
    """Requantized versions go to the test's temporary folder, never the user's cache."""
    import tempfile

    import inspector.gui.requantize.controller as rc

    monkeypatch.setattr(rc, "new_versions_folder", lambda: Path(tempfile.mkdtemp(prefix="tqi-versions-", dir=tmp_path)))


@pytest.fixture(autouse=True)
def random_calibration_asks(monkeypatch):
    """Runs that calibrate on random samples ask first (a modal box); tests answer `.answer`
    ("random" unless a test sets "choose" or "cancel") and read what was asked in `.texts`."""
    from types import SimpleNamespace

    import inspector.gui.requantize.controller as rc

    asks = SimpleNamespace(texts=[], answer="random")

    def answer(self, text: str) -> str:
        asks.texts.append(text)
        return asks.answer

    monkeypatch.setattr(rc.RequantizeController, "ask_random_calibration", answer)
    return asks


@pytest.fixture(scope="module")
def sig_pair():
    """The two-signature (prefill / decode) float and int8 fixtures."""
    from tests.helpers.paths import REPO
    from tests.helpers.shape_fixtures import cache_path

    cache = REPO / ".fixture-cache"
    return cache_path(cache, "sig_float"), cache_path(cache, "sig_int8")


@pytest.fixture
def sig_window(qtbot, window, sig_pair):
    """The main window with the two-signature pair open."""
    from tests.helpers.gui_helpers import open_wait

    open_wait(qtbot, window, "A", sig_pair[0])
    open_wait(qtbot, window, "B", sig_pair[1])
    return window


@pytest.fixture(scope="module")
def offset_pair():
    """A float / int8 twin whose input is a 64-vector (the example's is a 32x32 image)."""
    from tests.helpers.paths import REPO
    from tests.helpers.shape_fixtures import cache_path

    cache = REPO / ".fixture-cache"
    return str(cache_path(cache, "offset_float")), str(cache_path(cache, "offset_int8"))


@pytest.fixture
def diagnosed(qtbot, window, tmp_path):
    """The diagnosis fixture with conv2's output scale planted ×0.25 (clipping), compared on 40
    samples: (window, float path, planted path, op, options, result)."""
    from inspector.core.compare.comparison import CompareOptions
    from inspector.core.samples.settings import SampleSettings
    from tests.helpers import diagnosis_fixtures as dx
    from tests.helpers.gui_helpers import open_wait
    from tests.helpers.paths import REPO
    from tests.helpers.task_fixtures import TaskFixtures

    paths = dx.models(REPO / ".fixture-cache")
    q = paths["diag_int8"]
    op = dx.op_index(q, "conv2")
    plant = tmp_path / "clipping.tflite"
    plant.write_bytes(dx.scale_output(q.read_bytes(), op, 0.25))
    open_wait(qtbot, window, "A", paths["diag_float"])
    open_wait(qtbot, window, "B", plant)
    opts = CompareOptions(samples=SampleSettings(count=40, seed=1, source=str(TaskFixtures(REPO / ".fixture-cache").npz(40))), isolated=True)
    window.features.compare.set_options(opts)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=120_000) as blocker:
        window.features.compare.run(opts)
    return window, paths["diag_float"], plant, op, opts, blocker.args[0]
