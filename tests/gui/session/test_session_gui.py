"""Sessions through the GUI: save, open in a new window (same models, selection, comparison),
changed / missing models reported, bad files, crash-recovery offer and autosave."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.recovery import CrashRecovery
from inspector.core.state.session import load_session, save_session
from inspector.core.viewdata.task_figures import first_task
from inspector.gui.main_window import MainWindow
from tests.helpers.audit_fixtures import planted
from tests.helpers.gui_helpers import open_wait

WAIT_MS = 30_000


@pytest.fixture(scope="module")
def comparison(fixture_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    return compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))


def _compare(window):
    return window.features.compare


def _new_window(qtbot, tmp_path, name: str) -> MainWindow:
    win = MainWindow(settings=QSettings(str(tmp_path / f"{name}.ini"), QSettings.Format.IniFormat))
    qtbot.addWidget(win)
    win.show()
    return win


def _open_session(qtbot, win, path) -> dict:
    with qtbot.waitSignal(win.features.session.restored, timeout=WAIT_MS) as sig:
        assert win.features.session.open(path)
    return sig.args[0]


def _pair(qtbot, win, fp, qp, result=None) -> None:
    open_wait(qtbot, win, "A", fp)
    open_wait(qtbot, win, "B", qp)
    if result is not None:
        win.features.compare_features.source.set_result(result)


def test_round_trip_through_a_new_window(qtbot, window, fixture_path, tmp_path, comparison):
    fp, qp = fixture_path("float"), fixture_path("int8")
    opts = CompareOptions(samples=SampleSettings(count=3, seed=7), runtime="reference", isolated=True, keep_values=frozenset({5, 2}))
    _compare(window).set_options(opts)
    _pair(qtbot, window, fp, qp, comparison)
    assert window.features.compare.result is comparison  # the session's result goes through the comparison controller
    bias = window.controller.subgraph("B").ops[3].inputs[2]
    window.controller.select_op("B", 3, tensor=bias)
    window.controller.set_channel(5)
    sel = window.controller.selection
    path = tmp_path / "s.tqi.json"
    window.features.session.save(path)
    saved = load_session(path)
    assert saved["models"]["quant"]["path"] == str(Path(qp).resolve()) and saved["models"]["quant"]["sha256"]
    assert saved["selection"]["op_b"] == 3 and saved["selection"]["tensor_b"] == bias
    assert saved["results"]["compare"]["layers"] == json.loads(json.dumps(comparison.to_json()["layers"]))
    assert saved["inputs"]["samples"]["seed"] == 7 and saved["inputs"]["keep_values"] == [2, 5]

    win2 = _new_window(qtbot, tmp_path, "second")
    shown: list[object] = []
    _compare(win2).result_changed.connect(shown.append)
    _open_session(qtbot, win2, path)
    # The saved comparison is B's version's too: decoded as one object and shown once (it was
    # shown twice, each time redrawing every view).
    results = [r for r in shown if r is not None]
    assert len(results) == 1 and results[0] is win2.features.compare.result, len(results)
    assert win2.features.compare.task is not None and win2.features.compare.task is first_task(win2.features.compare.result)[0]
    c2 = win2.controller
    assert [Path(c2.models[s].path).resolve() for s in "AB"] == [Path(fp).resolve(), Path(qp).resolve()]
    assert c2.selection == sel and c2.channel == 5
    assert win2.panes["B"].selected_op() == 3 and win2.panes["B"].tensors.selected_tensor() == bias
    assert win2.features.compare.options == opts
    restored = win2.features.compare.result
    assert restored is not None and win2.features.compare_features.source.result() is restored
    assert restored.to_json()["layers"] == comparison.to_json()["layers"]
    # Views built on the restored comparison: observed ranges in the op math, comparison checks in the audit.
    assert win2.features.opmath.op_math_panel.math.op_index == 3
    assert "observed in the comparison" in win2.features.review.audit_view.summary.text()
    assert not win2.banner.isVisible()


def test_changed_and_missing_models_are_reported(qtbot, window, fixture_path, tmp_path, comparison):
    fp = tmp_path / "float.tflite"
    qp = tmp_path / "int8.tflite"
    shutil.copy(fixture_path("float"), fp)
    shutil.copy(fixture_path("int8"), qp)
    result = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=1), threads=1))
    _pair(qtbot, window, fp, qp, result)
    path = tmp_path / "s.tqi.json"
    window.features.session.save(path)
    # Model B changes on disk (planted violations, same size: different content).
    data, _ = planted(fixture_path("int8"), ["weight_zero_point"])
    qp.write_bytes(data)
    win2 = _new_window(qtbot, tmp_path, "changed")
    _open_session(qtbot, win2, path)
    text = win2.banner.text
    assert win2.banner.isVisible() and f"model B: {qp}" in text and "changed since the session was saved" in text
    assert "comparison result was not restored" in text
    assert win2.controller.models["B"] is not None  # still opened, for inspection
    assert win2.features.compare_features.source.result() is None
    # Model A is gone: reported, slot left empty, the rest restored.
    fp.unlink()
    win3 = _new_window(qtbot, tmp_path, "missing")
    _open_session(qtbot, win3, path)
    assert f"model A: {fp} no longer exists" in win3.banner.text
    assert win3.controller.models["A"] is None and win3.controller.models["B"] is not None


@pytest.mark.parametrize("content, needle", [("{not json", "not valid JSON"), ('{"a": 1}', "no schema_version"),
                                             ('{"schema_version": 99}', "newer version")])  # fmt: skip
def test_bad_session_file_shows_error(qtbot, window, fixture_path, tmp_path, content, needle):
    open_wait(qtbot, window, "B", fixture_path("int8"))
    bad = tmp_path / "bad.tqi.json"
    bad.write_text(content)
    assert not window.features.session.open(bad)
    assert window.banner.isVisible() and needle in window.banner.text and str(bad) in window.banner.text
    assert window.controller.models["B"] is not None  # nothing lost


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_crash_recovery_offer_restore_and_autosave(qtbot, window, fixture_path, tmp_path, comparison):
    fp, qp = fixture_path("float"), fixture_path("int8")
    base = tmp_path / "state"
    crashed = CrashRecovery(base, pid=_dead_pid())
    crashed.start()
    save_session(crashed.autosave_file, {
        "models": {"float": str(fp), "quant": str(qp)},
        "selection": {"origin": "B", "op_b": 5},
        "results": {"compare": comparison.to_json()},
    })  # fmt: skip
    asked = []
    session = window.features.session
    with qtbot.waitSignal(session.restored, timeout=WAIT_MS):
        rec = session.start_recovery(CrashRecovery(base), ask=lambda r: asked.append(r) or True)
    assert rec is not None and rec.pid == crashed.pid and asked == [rec]
    c = window.controller
    assert Path(c.models["B"].path).resolve() == Path(qp).resolve() and c.selection.op_b == 5
    assert window.features.compare_features.source.result() is not None
    assert not crashed.marker.exists() and not crashed.autosave_file.exists()  # offered once
    # This instance is marked running and autosaves what it shows.
    assert session.recovery.marker.exists()
    qtbot.waitUntil(lambda: session.autosave_idle, timeout=WAIT_MS)  # autosaves after each model load
    assert load_session(session.recovery.autosave_file)["models"]["quant"]["path"] == str(Path(qp).resolve())
    c.select_op("B", 3)
    w = session.autosave(background=False)
    assert w is not None and not w.error
    auto = load_session(session.recovery.autosave_file)
    assert auto["selection"]["op_b"] == 3 and auto["results"]["compare"]["layers"]
    assert session.autosave(background=False) is None  # unchanged: not rewritten
    session.clean_exit()
    assert not any(base.iterdir())  # a clean exit leaves nothing to recover


def test_recovery_declined_discards(qtbot, window, tmp_path, fixture_path):
    base = tmp_path / "state"
    crashed = CrashRecovery(base, pid=_dead_pid())
    crashed.start()
    save_session(crashed.autosave_file, {"models": {"float": str(fixture_path("float")), "quant": None}})
    assert window.features.session.start_recovery(CrashRecovery(base), ask=lambda r: False) is None
    assert window.controller.models["A"] is None
    assert not crashed.autosave_file.exists()
    window.features.session.clean_exit()


def test_reopened_from_another_working_directory(qtbot, tmp_path, fixture_path, monkeypatch):
    """Models opened by relative paths, saved, reopened from another working directory: v0,
    the versions of B, the models and the samples file are all found (paths are stored
    absolute); a relative path in a hand-edited session resolves against the session's folder."""
    import numpy as np

    work = tmp_path / "work"
    work.mkdir()
    for name in ("float", "int8"):
        shutil.copy(fixture_path(name), work / f"{name}.tflite")
    np.save(work / "x.npy", np.zeros((2, 1), np.float32))
    monkeypatch.chdir(work)
    win = _new_window(qtbot, tmp_path, "first")
    _pair(qtbot, win, "float.tflite", "int8.tflite")
    win.features.compare.set_options(CompareOptions(samples=SampleSettings(count=2, source="x.npy")))
    assert win.features.requantize.versions[0].path == str(work / "int8.tflite")
    session = tmp_path / "sessions" / "s.tqi.json"
    session.parent.mkdir()
    win.features.session.save(session)
    saved = json.loads(session.read_text())
    assert saved["requantize_plans"][0]["path"] == str(work / "int8.tflite")
    assert saved["requantize_plans"][0]["float_model"] == str(work / "float.tflite")
    assert saved["inputs"]["samples"]["source"] == str(work / "x.npy")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    win2 = _new_window(qtbot, tmp_path, "second")
    _open_session(qtbot, win2, session)
    assert not win2.banner.isVisible(), win2.banner.text
    assert [win2.controller.models[s].path for s in "AB"] == [str(work / "float.tflite"), str(work / "int8.tflite")]
    assert [v.path for v in win2.features.requantize.versions] == [str(work / "int8.tflite")]
    assert win2.features.compare.options.samples.source == str(work / "x.npy")

    # A session written with paths relative to its own folder opens from a third directory.
    rel = dict(saved)
    rel["models"] = {r: dict(m, path=f"../work/{Path(m['path']).name}") for r, m in saved["models"].items()}
    rel["requantize_plans"] = [dict(saved["requantize_plans"][0], path="../work/int8.tflite", float_model="../work/float.tflite")]
    rel["inputs"] = dict(saved["inputs"], samples=dict(saved["inputs"]["samples"], source="../work/x.npy"))
    moved = session.with_name("rel.tqi.json")
    moved.write_text(json.dumps(rel))
    state = load_session(moved)
    assert state["models"]["quant"]["path"] == str(work / "int8.tflite")
    assert state["requantize_plans"][0]["path"] == str(work / "int8.tflite")
    assert state["inputs"]["samples"]["source"] == str(work / "x.npy")
    win3 = _new_window(qtbot, tmp_path, "third")
    _open_session(qtbot, win3, moved)
    assert not win3.banner.isVisible(), win3.banner.text
    assert win3.controller.models["B"].path == str(work / "int8.tflite")
