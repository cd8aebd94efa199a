"""Nothing lost: interrupted writes leave the old file intact; input models are never opened for writing."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from inspector.core import writing
from inspector.core.state.session import load_session, save_session
from inspector.core.writing import write_json_output
from tests.helpers.failing_writes import fail_mid_write

REPO = Path(__file__).resolve().parents[2]


def _leftovers(folder: Path, keep: set[str]) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name not in keep)


@pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
def test_failed_session_write_keeps_old_file(tmp_path, monkeypatch, failing):
    path = tmp_path / "s.tqi.json"
    save_session(path, {"selection": {"tensor": 1}})
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError(28, "No space left on device")

    if failing == "write":  # fail halfway through writing the data
        fail_mid_write(monkeypatch, writing, OSError(28, "No space left on device"))
    else:
        monkeypatch.setattr(writing.os, failing, boom)
    with pytest.raises(OSError, match="No space left"):
        save_session(path, {"selection": {"tensor": 2}, "results": {"compare": {"big": list(range(10000))}}})
    assert path.read_bytes() == before
    assert load_session(path)["selection"] == {"tensor": 1}
    assert _leftovers(tmp_path, {"s.tqi.json"}) == []  # no temp file left behind


def test_failed_json_output_keeps_old_report(tmp_path, monkeypatch):
    out = tmp_path / "info.json"
    write_json_output({"v": 1}, str(out))
    monkeypatch.setattr(writing.os, "replace", lambda *a: (_ for _ in ()).throw(OSError(5, "I/O error")))
    with pytest.raises(OSError):
        write_json_output({"v": 2}, str(out))
    assert json.loads(out.read_text()) == {"v": 1}
    assert _leftovers(tmp_path, {"info.json"}) == []


_WRITER = """
import os, sys, time
from inspector.core import writing
from inspector.core.state.session import save_session
path, mode = sys.argv[1], sys.argv[2]
payload = "x" * 8_000_000
save_session(path, {"selection": {"round": 0}, "results": {"blob": {"data": payload}}})
print("first", flush=True)
if mode == "pause_before_rename":
    real = os.replace
    def slow_replace(a, b):
        print("renaming", flush=True)
        time.sleep(30)
        real(a, b)
    writing.os.replace = slow_replace
i = 0
while True:
    i += 1
    save_session(path, {"selection": {"round": i}, "results": {"blob": {"data": payload}}})
"""


def _writer(tmp_path: Path, mode: str) -> tuple[subprocess.Popen, Path]:
    path = tmp_path / "s.tqi.json"
    proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(path), mode], cwd=REPO, stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "first"
    return proc, path


def _assert_complete(path: Path) -> int:
    s = load_session(path)  # raises on a partial file
    assert len(s["results"]["blob"]["data"]) == 8_000_000
    return s["selection"]["round"]


def test_kill_between_write_and_rename_keeps_old_file(tmp_path):
    proc, path = _writer(tmp_path, "pause_before_rename")
    assert proc.stdout.readline().strip() == "renaming"  # the new temp file is complete, not yet renamed
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _assert_complete(path) == 0
    temps = _leftovers(tmp_path, {path.name})
    assert len(temps) == 1 and temps[0].startswith(".s.tqi.json.") and temps[0].endswith(".tmp")


def test_kill_at_random_moments_never_leaves_a_partial_session(tmp_path):
    rounds = set()
    for delay in (0.05, 0.13, 0.21, 0.37, 0.5):
        proc, path = _writer(tmp_path, "loop")
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        rounds.add(_assert_complete(path))
        for t in _leftovers(tmp_path, {path.name}):  # a killed writer may leave its hidden temp file
            assert t.startswith(".s.tqi.json.") and t.endswith(".tmp")
    assert max(rounds) > 0  # the writer really was overwriting the file when killed


_AUDIT = """
import json, mmap, os, sys
model, out, session = sys.argv[1:4]
model_real = os.path.realpath(model)
events = []
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC

def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        p = os.path.realpath(os.fsdecode(args[0]))
        if p == model_real:
            mode, flags = args[1], args[2] if len(args) > 2 else 0
            write = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE_FLAGS)
            events.append(["open", mode, flags, write])
    elif event == "mmap.__new__":
        fd, length, access, offset = args
        if fd >= 0 and os.path.realpath(f"/proc/self/fd/{fd}") == model_real:
            events.append(["mmap", access, None, access != mmap.ACCESS_READ])

sys.addaudithook(hook)
from inspector.cli import main
from inspector.core.tflite.model import Model
from inspector.core.state.session import model_changes, save_session
from inspector.core.runtime.probe import probe_model
rc = main(["info", model, "--json", out])
m = Model(model)
for t in m.main.tensors:
    m.tensor_data(t)
save_session(session, {"models": {"quant": model}})
changes = model_changes(json.load(open(session)))
probe_model(model)
print(json.dumps({"rc": rc, "events": events, "changes": changes}))
"""


def test_input_model_is_never_opened_for_writing(tmp_path, fixture_path):
    model = tmp_path / "int8.tflite"
    shutil.copy(fixture_path("int8"), model)
    os.chmod(model, 0o444)
    digest, mtime = hashlib.sha256(model.read_bytes()).hexdigest(), model.stat().st_mtime_ns
    proc = subprocess.run(
        [sys.executable, "-c", _AUDIT, str(model), str(tmp_path / "info.json"), str(tmp_path / "s.tqi.json")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["rc"] == 0 and report["changes"] == {}
    kinds = [e[0] for e in report["events"]]
    assert kinds.count("open") >= 3 and "mmap" in kinds  # the hook saw the reads (info, Model, hashing)
    assert [e for e in report["events"] if e[3]] == []  # and no write access at all
    assert hashlib.sha256(model.read_bytes()).hexdigest() == digest and model.stat().st_mtime_ns == mtime
    assert json.loads((tmp_path / "info.json").read_text())["path"] == str(model)
