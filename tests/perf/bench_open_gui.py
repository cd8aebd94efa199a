"""Open a 200 MB+ model in the GUI (offscreen): time until its tensor table is populated.

Target (issue 2): under 0.5 s, memory not growing by the file size (tensor data are views over
the mapped file). Uses the generated big model of bench_big_model.py (cached).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: tests.helpers


def _rss_anon_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> int:
    from PySide6.QtCore import QSettings

    from inspector.gui.app import make_app
    from inspector.gui.main_window import MainWindow
    from tests.helpers.hostile_fixtures import HostileCache

    path = HostileCache().path("big_float")
    size_mb = path.stat().st_size / 2**20
    app = make_app()
    with tempfile.TemporaryDirectory() as d:
        win = MainWindow(settings=QSettings(str(Path(d) / "b.ini"), QSettings.Format.IniFormat))
        win.resize(1400, 900)
        win.show()
        app.processEvents()
        anon0 = _rss_anon_mb()
        t0 = time.perf_counter()
        win.open_model("A", path, background=False)
        table = win.panes["A"].tensors
        want = len(win.controller.subgraph("A").tensors)
        while table.proxy.rowCount() < want and time.perf_counter() - t0 < 10:
            app.processEvents()
        app.processEvents()
        dt = time.perf_counter() - t0
        grown = _rss_anon_mb() - anon0
        rows = table.proxy.rowCount()
        win.close()
    print(f"GUI open of {path.name} ({size_mb:.0f} MB, {want} tensors): table populated with {rows} rows in {dt * 1e3:.0f} ms (target < 500 ms)")
    print(f"anonymous memory growth: {grown:.1f} MB ({100 * grown / size_mb:.2f}% of the file)")
    ok = rows == want and dt < 0.5 and grown < 0.1 * size_mb
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
