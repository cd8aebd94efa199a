"""A command-line process forks its worker (`start_default_worker(fork=True)`) while it has one
thread: the worker is its child, with the preloaded modules already imported, and still a
separate process (a crash in it is reported, the next call starts a new one). With a second
thread alive, or Qt loaded, it falls back to the default start method (the fork server). Each
case runs in a fresh interpreter, as the command line does."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

_CHILD = r"""
import os, sys, threading
from inspector.core.errors import RuntimeFailure
from inspector.core.runtime.worker import run_isolated, start_default_worker
from tests.helpers.worker_probe import crash, where

if sys.argv[1] == "thread":
    stop = threading.Event()
    threading.Thread(target=stop.wait, daemon=True).start()
if sys.argv[1] == "qt":
    import PySide6.QtCore  # a process with Qt loaded is never forked (its threads are native)
w = start_default_worker(fork=True, preload=("json",))
ppid, loaded = run_isolated(where)
try:
    run_isolated(crash, step="crashing")
    crashed = "no"
except RuntimeFailure as e:
    crashed = "SIGSEGV" if "SIGSEGV" in str(e) else str(e)
again = run_isolated(where)[0] == os.getpid()
print(ppid == os.getpid(), loaded, crashed, again, w.starts)
if sys.argv[1] == "thread":
    stop.set()
"""


def _run(mode: str) -> list[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_a_single_threaded_process_forks_its_worker_with_the_modules_loaded():
    forked, loaded, crashed, again, starts = _run("alone")
    assert forked == "True" and loaded == "True"
    assert crashed == "SIGSEGV" and again == "True" and starts == "2"  # a crash is reported, the next call forks again


def test_with_another_thread_alive_the_worker_is_not_forked():
    forked, _, crashed, again, starts = _run("thread")
    assert forked == "False" and again == "False"  # the fork server's child
    assert crashed == "SIGSEGV" and starts == "2"


def test_a_process_with_qt_loaded_is_not_forked():
    forked, _, crashed, again, _ = _run("qt")
    assert forked == "False" and again == "False" and crashed == "SIGSEGV"


def test_only_the_commands_own_process_forks_its_worker():
    """`compare` forks its worker only in a process `cli.run` started, never in a caller of `main`."""
    from inspector.cli import owns_process

    assert not owns_process()
    code = "import sys\nfrom inspector import cli\nsys.argv = ['x', '--version']\ntry:\n    cli.run()\nfinally:\n    print(cli.owns_process())"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60, cwd=REPO)
    assert out.stdout.split()[-1] == "True"


_IN_TRANSACTION = r"""
import os, sys
from inspector.core.runtime.worker import run_isolated, start_default_worker
from inspector.core.writing import outputs
from tests.helpers.worker_probe import write_cache_file

with outputs(()):
    start_default_worker(fork=True)  # forked inside the command's transaction, as compare does
    print(run_isolated(write_cache_file, sys.argv[1]), os.path.exists(sys.argv[1]))
"""


def test_a_worker_forked_inside_a_command_writes_its_own_files(tmp_path):
    """The forked worker inherited the command's output transaction, so what it wrote (the Keras
    twin cache) was staged as temporary files only the command could commit: never written, and
    every later Keras `compare` failed with 'cannot read the file' for the twin."""
    target = tmp_path / "twin.tflite"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", _IN_TRANSACTION, str(target)], env=env, capture_output=True, text=True,
                         timeout=120, cwd=REPO)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "True"] and target.read_bytes() == b"cache"
    assert [p.name for p in tmp_path.iterdir()] == ["twin.tflite"]  # no staged temporary left beside it
