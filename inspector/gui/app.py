"""Start the desktop app: `run_app(float_path, quant_path)`; `render_self_test` for --self-test."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import QCoreApplication, QSettings
from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication

from inspector.paths import app_icon

if TYPE_CHECKING:
    from inspector.gui.main_window import MainWindow

ORGANIZATION = "tflite-inspector"
APPLICATION = "TFLite Quantization Inspector"


def make_app(argv: list[str] | None = None) -> QApplication:
    """The QApplication (created once), following the system palette, with the app icon."""
    app = QApplication.instance()
    if app is None:
        QCoreApplication.setOrganizationName(ORGANIZATION)
        QCoreApplication.setApplicationName(APPLICATION)
        app = QApplication(argv if argv is not None else sys.argv[:1])
    if not isinstance(app, QApplication):
        raise RuntimeError("a QCoreApplication without widgets is running; the GUI needs a QApplication")
    import pyqtgraph as pg

    pg.setConfigOptions(antialias=True)
    icon = app_icon()
    if icon.exists():
        app.setWindowIcon(QIcon(str(icon)))
    return app


def create_window(float_path: str | None = None, quant_path: str | None = None, settings: QSettings | None = None) -> MainWindow:
    """The app's window, built, then the given models opened (in Worker threads)."""
    from inspector.gui.interpreter import freeze_startup_objects
    from inspector.gui.main_window import MainWindow

    win = MainWindow(settings=settings)
    freeze_startup_objects()  # a full garbage collection: 90 -> 16-21 ms with a 1,500-op pair open
    if float_path:
        win.open_model("A", float_path)
    if quant_path:
        win.open_model("B", quant_path)
    return win


def run_app(float_path: str | None = None, quant_path: str | None = None) -> int:
    """Open the main window (with the given models, if any) and run until it closes."""
    app = make_app()
    win = create_window(float_path, quant_path)
    win.show()
    from PySide6.QtCore import QTimer

    QTimer.singleShot(0, win.features.session.start_recovery)  # offer the session of a crashed run; autosave
    _close_on_signals(app, win)
    code = app.exec()
    win.features.session.clean_exit()
    from inspector.gui.workers import Worker

    Worker.shutdown(5000)  # every worker cancelled and ended before the exit closes the worker process
    return int(code)


def _close_on_signals(app: QApplication, win: MainWindow) -> None:
    """SIGTERM (logout, `kill`) and SIGINT (Ctrl+C in a terminal) close the window normally, so
    the session is not taken for a crash next time. Qt's event loop does not return to Python on
    its own; a cheap timer lets Python run its signal handlers."""
    import signal

    from PySide6.QtCore import QTimer

    def handler(_signum, _frame) -> None:
        QTimer.singleShot(0, win.close)

    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or not on this platform
            return
    tick = QTimer(app)
    tick.timeout.connect(lambda: None)
    tick.start(200)


def render_self_test(float_path: str, quant_path: str) -> tuple[int, int, int]:
    """Open both models, select the first layer with weights, render offscreen; (width, height,
    distinct colours of the rendering: a blank or unpainted window has a handful)."""
    make_app()
    from inspector.gui.main_window import MainWindow

    with tempfile.TemporaryDirectory() as d:  # never touch the user's settings
        settings = QSettings(str(Path(d) / "selftest.ini"), QSettings.Format.IniFormat)
        win = MainWindow(settings=settings)
        for slot, path in (("A", float_path), ("B", quant_path)):
            w = win.open_model(slot, path, background=False)
            if w is None:  # a whole .litertlm bundle: its sections were listed
                raise RuntimeError(f"{path}: a .litertlm bundle, give one TFLite section as {path}#N")
            if w.error:
                raise RuntimeError(w.error)
        c = win.controller
        sg = c.subgraph("B")
        if sg is None:
            raise RuntimeError(f"{quant_path}: model B did not open")
        op = next(op.index for op in sg.ops if op.type in ("CONV_2D", "FULLY_CONNECTED"))
        c.select_op("B", op)
        if c.weights is None or c.weights.metrics is None:
            raise RuntimeError("no weight comparison for the first conv layer")
        win.resize(1400, 900)
        img = win.grab().toImage()
        win.close()
        del settings
    colours = {img.pixel(x, y) for x in range(0, img.width(), 7) for y in range(0, img.height(), 7)}
    return img.width(), img.height(), len(colours)
