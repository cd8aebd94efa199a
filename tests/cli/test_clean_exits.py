"""Issue 34 §10: no runtime chatter on stderr, no process outliving the command, the same words
for a Keras model wherever a .tflite is needed, a refusal before any warning, and a --help that
says what the README says.

Before: `INFO: Created TensorFlow Lite XNNPACK delegate for CPU.` on stderr of the self-test,
extract and requantize, and the fork server and the worker still running when the shell had the
prompt back; `requantize KERAS` said `expected the identifier 'TFL3'`; `suggest` printed its
random-calibration WARNING and then refused the pair; exit codes were in the README only."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from inspector.cli import build_parser, main
from inspector.core import writing
from tests.helpers.paths import REPO

EX = REPO / "inspector" / "resources" / "examples"
F, Q = str(EX / "example_float.tflite"), str(EX / "example_int8.tflite")


def _session_processes(sid: int) -> list[str]:
    """The live processes of session `sid` (zombies, already ended, are not counted)."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(pid)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_no_runtime_line_and_no_process_left(tmp_path):
    runs = {
        "self-test": ["--self-test"],
        "extract": ["extract", Q, "--op", "1", "--samples", "2", "--out", str(tmp_path / "repro")],
        "requantize": ["requantize", F, "--samples", "2", "--out", str(tmp_path / "q.tflite")],
        "compare-runtimes": ["compare-runtimes", Q, "--samples", "2"],
    }
    env = {**os.environ, "PYTHONPATH": str(REPO), "QT_QPA_PLATFORM": "offscreen"}
    procs = {name: subprocess.Popen([sys.executable, "-m", "inspector", *argv], cwd=tmp_path, env=env, text=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
             for name, argv in runs.items()}  # fmt: skip
    for name, p in procs.items():
        out, err = p.communicate(timeout=300)
        left = _session_processes(p.pid)  # the command's session: its worker, fork server, tracker
        assert p.returncode == 0, (name, err[-2000:])
        assert "XNNPACK" not in err and "INFO:" not in err, (name, err)
        assert left == [], (name, left)


@pytest.mark.parametrize("argv", [
    ["requantize", "{k}", "--out", "{tmp}/a.tflite"],
    ["requantize", F, "--calibrate-from", "{k}", "--out", "{tmp}/a.tflite"],
    ["requantize", "{k}", Q, "--keep-float", "op:1", "--out", "{tmp}/a.tflite"],
    ["suggest", "{k}", Q, "--target-sqnr", "30"],
    ["extract", Q, "--float", "{k}", "--op", "1", "--out", "{tmp}/r"],
    ["compare-runtimes", "{k}"],
    ["graph", "{k}", Q, "--svg", "{tmp}/g.svg"],
])  # fmt: skip
def test_a_keras_model_where_a_tflite_is_needed_says_how_to_make_one(argv, keras_models, tmp_path, capsys):
    k = str(keras_models / "cnn_float.h5")
    argv = [a.format(k=k, tmp=tmp_path) for a in argv]
    writing.clear_protected_inputs()
    t = time.perf_counter()
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    writing.clear_protected_inputs()
    assert code == 2 and len(err) == 1, err
    verb = "draws" if argv[0] == "graph" else "reads"
    assert err[0] == (f"tflite-inspector {argv[0]}: {k}: {argv[0]} {verb} .tflite models: make the TFLite twins first "
                      "(tflite-inspector convert MODEL --out-dir DIR)")  # fmt: skip
    assert time.perf_counter() - t < 5 and list(tmp_path.iterdir()) == []


def test_suggest_refuses_the_pair_before_any_warning(fixture_path, capsys):
    """A pair that does not correspond on random samples: the refusal alone (before: the
    random-calibration WARNING first, then the refusal)."""
    writing.clear_protected_inputs()
    code = main(["suggest", F, str(fixture_path("stateful_int8")), "--target-sqnr", "30", "--samples", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    writing.clear_protected_inputs()
    assert code == 2 and len(err) == 1 and "WARNING" not in err[0], err
    assert "do not correspond" in err[0]


def test_help_carries_exit_codes_and_output_rules_as_the_readme():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.choices and "compare" in a.choices)
    readme = (REPO / "README.md").read_text()
    assert "`2` bad input or an output that cannot be written" in readme
    assert "an output's folder must exist" in readme.lower()
    for name, p in [("tflite-inspector", parser), *sub.choices.items()]:
        text = p.format_help()
        assert "exit codes: 0 success; 1 a threshold was crossed" in text, name
        assert "2 bad input or an output that cannot be" in text, name
        assert "an output's folder must exist" in text, name
    compare = " ".join(sub.choices["compare"].format_help().split())
    assert "float .tflite" not in compare and "Keras .keras / .h5 file or a SavedModel folder" in compare
    assert "(required unless" in " ".join(sub.choices["suggest"].format_help().split())
    assert "bundled example pair its bundled inputs" in " ".join(sub.choices["report"].format_help().split())
    for flag in ("--int8 PATTERN", "--dynamic PATTERN", "--weight-only PATTERN", "--calibrate-from QUANT"):
        assert flag in readme, flag
