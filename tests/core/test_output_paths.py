"""Safe output paths: devices, FIFOs, sockets and links are written through, never renamed over;
only nodes created in tmp_path are used (never the system's /dev entries)."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from inspector.core import writing
from inspector.core.errors import InputError
from inspector.core.writing import write_json_output, write_output
from tests.helpers.failing_writes import fail_mid_write

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_protected_leftovers():
    yield
    writing.clear_protected_inputs()


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod of a character device needs root")
def test_character_device_is_written_in_place(tmp_path):
    dev = tmp_path / "null"
    os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a private /dev/null
    before = os.stat(dev)
    write_output(dev, b"x" * 100_000)
    after = os.stat(dev)
    assert stat.S_ISCHR(after.st_mode) and after.st_rdev == before.st_rdev and after.st_ino == before.st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["null"]  # no temp file left beside it


def test_fifo_is_written_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    payload = {"values": list(range(30_000))}  # bigger than a pipe buffer
    write_json_output(payload, str(fifo))
    reader.join(timeout=30)
    assert not reader.is_alive()
    assert got and got[0] == (writing.to_json_text(payload) + "\n").encode()
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_unix_socket_is_written_not_replaced(tmp_path):
    path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    got = bytearray()

    def serve():
        conn, _ = server.accept()
        with conn:
            while chunk := conn.recv(65536):
                got.extend(chunk)

    t = threading.Thread(target=serve)
    t.start()
    write_output(path, b"hello socket")
    t.join(timeout=30)
    server.close()
    assert bytes(got) == b"hello socket" and stat.S_ISSOCK(os.lstat(path).st_mode)


def test_symlink_to_file_replaces_target_and_keeps_link(tmp_path):
    real = tmp_path / "data" / "real.json"
    real.parent.mkdir()
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(Path("data") / "real.json")  # relative link
    ino = real.stat().st_ino
    write_json_output({"v": 2}, str(link))
    assert link.is_symlink() and os.readlink(link) == os.path.join("data", "real.json")
    assert real.read_text() == '{\n  "v": 2\n}\n'
    assert real.stat().st_ino != ino  # replaced atomically, not truncated in place
    assert stat.S_IMODE(real.stat().st_mode) == 0o640  # keeps its permissions
    assert sorted(p.name for p in real.parent.iterdir()) == ["real.json"]


def test_dangling_symlink_creates_its_target(tmp_path):
    link = tmp_path / "link.json"
    link.symlink_to(tmp_path / "new.json")
    write_output(link, "fresh")
    assert link.is_symlink() and (tmp_path / "new.json").read_text() == "fresh"


def test_existing_file_keeps_permissions(tmp_path):
    out = tmp_path / "out.csv"
    out.write_text("old")
    os.chmod(out, 0o600)
    write_output(out, "new")
    assert out.read_text() == "new" and stat.S_IMODE(out.stat().st_mode) == 0o600
    fresh = tmp_path / "fresh.csv"
    write_output(fresh, "x")
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~umask


_STDOUT_LINK = """
import sys
from inspector.core.writing import write_output
print("before", flush=True)
write_output(sys.argv[1], "through the link\\n")
print("after", flush=True)
"""


@pytest.mark.parametrize("kind", ["proc_link", "dash"])
def test_symlink_to_proc_self_fd_1_and_dash_reach_stdout(tmp_path, kind):
    link = tmp_path / "out.json"
    if kind == "proc_link":
        link.symlink_to("/proc/self/fd/1")
        dest = str(link)
    else:
        dest = "-"
    proc = subprocess.run([sys.executable, "-c", _STDOUT_LINK, dest], cwd=REPO, capture_output=True,
                          text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "before\nthrough the link\nafter\n"
    if kind == "proc_link":
        assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


def test_stdout_redirected_to_a_file_is_appended_not_truncated(tmp_path):
    """`--json /dev/stdout >> log`: the open stream is written, the log is neither replaced nor cut."""
    link = tmp_path / "stdout"
    link.symlink_to("/proc/self/fd/1")
    log = tmp_path / "log.txt"
    log.write_text("earlier line\n")
    with open(log, "a") as f:
        proc = subprocess.run([sys.executable, "-c", _STDOUT_LINK, str(link)], cwd=REPO, stdout=f,
                              stderr=subprocess.PIPE, text=True, timeout=60,
                              env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 0, proc.stderr
    assert log.read_text() == "earlier line\nbefore\nthrough the link\nafter\n"


def test_interrupted_write_leaves_old_file(tmp_path, monkeypatch):
    out = tmp_path / "report.html"
    out.write_text("old report")
    link = tmp_path / "latest.html"
    link.symlink_to(out)
    fail_mid_write(monkeypatch, writing, RuntimeError("interrupted mid-write"), keep=10 / 11_000)
    for dest in (out, link):
        with pytest.raises(RuntimeError, match="interrupted"):
            write_output(dest, "new report " * 1000)
        assert out.read_text() == "old report"
    assert link.is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest.html", "report.html"]


def test_input_model_is_refused_directly_and_through_a_link(tmp_path, fixture_path):
    model = tmp_path / "m.tflite"
    shutil.copy(fixture_path("int8"), model)
    before = model.read_bytes()
    writing.protect_input(str(model))
    link = tmp_path / "alias.tflite"
    link.symlink_to(model)
    for dest in (model, link):
        with pytest.raises(InputError, match="input model"):
            write_output(dest, b"oops")
    assert model.read_bytes() == before


def test_cli_refuses_to_write_over_its_input_model(tmp_path, fixture_path):
    model = tmp_path / "m.tflite"
    shutil.copy(fixture_path("int8"), model)
    before = model.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "inspector", "info", str(model), "--json", str(model)],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and str(model) in lines[0] and "input model" in lines[0]
    assert model.read_bytes() == before


def test_info_into_a_closed_pipe_exits_quietly(fixture_path):
    proc = subprocess.Popen([sys.executable, "-m", "inspector", "info", str(fixture_path("int8"))],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)})
    proc.stdout.close()  # the reader is gone before anything is written, like `| head` finishing early
    err = proc.stderr.read().decode()
    proc.wait(timeout=120)
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert proc.returncode == 141
