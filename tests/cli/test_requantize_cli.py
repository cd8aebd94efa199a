"""`tflite-inspector requantize` (and suggest in the worker): recipes, inputs files, exit codes."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from inspector.cli import main
from inspector.core.tflite.model import load_model

REPO = Path(__file__).resolve().parents[2]


def _sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def test_cli_requantize_save_and_apply_recipe(fixture_path, tmp_path, capsys):
    src = fixture_path("float")
    before = _sha(src)
    a, b, rec = tmp_path / "a.tflite", tmp_path / "b.tflite", tmp_path / "r.json"
    argv = ["requantize", str(src), "--samples", "3", "--keep-float", "op:0", "--a16w8", "logits"]
    assert main([*argv, "--out", str(a), "--save-recipe", str(rec)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {a}" in out and "note:" in out
    assert (
        main(["requantize", str(src), "--samples", "3", "--recipe", str(rec), "--out", str(b)]) == 0
    )
    assert a.read_bytes() == b.read_bytes()
    m = load_model(a)
    logits = next(
        op for op in m.main.ops if m.main.tensors[op.outputs[0]].name == "cnn_1/logits_1/MatMul1"
    )
    assert [m.main.tensors[i].dtype for i in logits.inputs[:2]] == ["int16", "int8"]
    assert _sha(src) == before


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--keep-float", "conv("], "bad layer pattern 'conv('"),
        (["--keep-float", "no_such_layer"], "matches no op"),
        (["--a16w8", "op:99"], "ops 0..12"),
        (["--keep-float", "op:x"], "op:INDEX"),
    ],
)
def test_cli_bad_patterns_exit_2(fixture_path, tmp_path, capsys, extra, message):
    out = tmp_path / "never.tflite"
    assert main(["requantize", str(fixture_path("float")), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len([ln for ln in err if ln.startswith("tflite-inspector")]) == 1 and message in err[-1]
    assert not out.exists()


def test_cli_refuses_to_overwrite_the_input(fixture_path, capsys):
    src = fixture_path("float")
    before = _sha(src)
    assert main(["requantize", str(src), "--out", str(src)]) == 2
    assert "overwrite an input" in capsys.readouterr().err
    assert _sha(src) == before


def test_cli_requantize_with_an_inputs_file(example_pair, tmp_path, capsys):
    float_path, _ = example_pair
    out = tmp_path / "ex.tflite"
    npz = REPO / "inspector" / "resources" / "examples" / "example_inputs.npz"
    assert (
        main(
            [
                "requantize",
                str(float_path),
                "--inputs",
                str(npz),
                "--out",
                str(out),
                "--base",
                "a16w8",
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "random samples" not in text and out.exists()
    m = load_model(out)
    assert "int16" in {t.dtype for t in m.main.tensors}


def test_cli_requantize_and_suggest_run_in_the_worker(fixture_path, tmp_path, capsys, monkeypatch):
    """A LiteRT crash while requantizing (or suggesting) is a clean exit 2 naming the model and the
    step, not a dead command: the jobs run in the worker process."""
    import inspector.core.requantize.jobs as jobs
    from tests.helpers import isolation_helpers as h

    src, q = fixture_path("float"), fixture_path("int8")
    out = tmp_path / "new.tflite"
    monkeypatch.setattr(jobs, "requantize_cli_job", h.segfault_any)
    monkeypatch.setattr(jobs, "suggest_job", h.segfault_any)
    monkeypatch.setattr(jobs, "surgical_suggest_job", h.segfault_any)
    assert main(["requantize", str(src), "--samples", "2", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "crashed (signal SIGSEGV" in err and src.name in err and "step 'requantizing" in err and "Traceback" not in err
    assert not out.exists()
    assert main(["suggest", str(src), str(q), "--target-sqnr", "40"]) == 2
    err = capsys.readouterr().err
    assert "crashed (signal SIGSEGV" in err and q.name in err and "step 'suggesting" in err
