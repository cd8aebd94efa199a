"""Every pair command that runs interpreters forks its worker in its own process (`cli.fork_worker`,
as `compare` did alone before): the worker is the command's child, started in milliseconds with
numpy and LiteRT loaded, instead of a fork server's child after a fresh interpreter's start. The
results are the same as with the default worker: each command runs twice in one fresh process, as
a caller of `main` (never forked) and as `python -m inspector` (forked), and writes the same bytes."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers.paths import REPO

EXAMPLES = REPO / "inspector" / "resources" / "examples"
F, Q, INPUTS = (str(EXAMPLES / n) for n in ("example_float.tflite", "example_int8.tflite", "example_inputs.npz"))

_CHILD = r"""
import json, os, re, sys
from pathlib import Path
from inspector import cli
from inspector.core.runtime.worker import close_default_worker, run_isolated
from tests.helpers.worker_probe import where

argv, outs = json.loads(sys.argv[1]), json.loads(sys.argv[2])
got = []
for forked in (False, True):
    if forked:
        cli._own_process.append(True)  # what `cli.run` (the script, `python -m inspector`) records
    code = cli.main([a.replace("{run}", str(int(forked))) for a in argv])
    files = {}
    for o in outs:
        p = Path(o.replace("{run}", str(int(forked))))
        for f in sorted(p.rglob("*")) if p.is_dir() else [p]:
            if f.is_file():
                text = f.read_text(errors="replace").replace(str(p), "OUT")  # the run's own folder named inside
                files[str(f.relative_to(p)) if p.is_dir() else "output"] = re.sub(r'"(generated_at|elapsed_s)": [^,\n]*', "", text)  # the clock
    got.append({"code": code, "worker_is_child": run_isolated(where)[0] == os.getpid(), "files": files})
    close_default_worker()
print(json.dumps(got))
"""


def _both(argv: list[str], outs: list[str]) -> tuple[dict, dict]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(argv), json.dumps(outs)], env=env, capture_output=True,
                         text=True, timeout=300, cwd=REPO)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    default, forked = json.loads(out.stdout.strip().splitlines()[-1])
    return default, forked


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork start method: Linux")
@pytest.mark.parametrize(
    "argv, outs",
    [
        (["graph", F, Q, "--svg", "{tmp}/g{run}.svg", "--samples", "4"], ["{tmp}/g{run}.svg"]),
        (["compare-runtimes", Q, "--inputs", INPUTS, "--samples", "4", "--json", "{tmp}/p{run}.json"], ["{tmp}/p{run}.json"]),
        (["extract", Q, "--op", "0", "--inputs", INPUTS, "--out", "{tmp}/x{run}"], ["{tmp}/x{run}"]),
        (["report", F, Q, "--samples", "4", "--json", "{tmp}/r{run}.json"], ["{tmp}/r{run}.json"]),
    ],
    ids=["graph", "compare-runtimes", "extract", "report"],
)
def test_a_pair_command_forks_its_worker_and_writes_the_same_results(tmp_path, argv, outs):
    fill = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    default, forked = _both(fill, [o.replace("{tmp}", str(tmp_path)) for o in outs])
    assert default["worker_is_child"] is False  # a caller of `main`: the default (fork server) worker
    assert forked["worker_is_child"] is True
    assert default["code"] == forked["code"] == 0
    assert default["files"] and forked["files"] == default["files"]


def test_one_model_drawn_starts_no_worker(tmp_path):
    """`graph MODEL` runs no interpreter: nothing is forked (no worker module even imported)."""
    code = (
        "import sys\nfrom inspector import cli\ncli._own_process.append(True)\n"
        f"code = cli.main(['graph', {Q!r}, '--svg', {str(tmp_path / 'g.svg')!r}])\n"
        "print(code, 'inspector.core.runtime.worker' in sys.modules)"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-2:] == ["0", "False"]


def test_the_gui_on_a_pair_forks_its_worker_before_qt():
    """`gui FLOAT QUANT` forks its worker first (`gui_cmd.run` -> `cli.fork_worker`), while no Qt
    is loaded: it is the app's child, with LiteRT loaded, ready when the first comparison starts."""
    code = (
        "import argparse, os, sys\nfrom inspector import cli\ncli._own_process.append(True)\n"
        "from inspector.core.runtime.worker import run_isolated\nfrom tests.helpers.worker_probe import where\n"
        f"cli.fork_worker(argparse.Namespace(command='gui', float_model={F!r}, quant_model={Q!r}))\n"
        "qt = any(m.startswith('PySide6') for m in sys.modules)\n"
        "print(run_isolated(where)[0] == os.getpid(), 'ai_edge_litert.interpreter' in sys.modules, qt)\n"
        "cli.fork_worker(argparse.Namespace(command='gui', float_model=None, quant_model=None))"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-3:] == ["True", "True", "False"]
