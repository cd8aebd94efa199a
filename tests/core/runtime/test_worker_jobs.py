"""Typed across the worker: `run_isolated` returns its job's type, and the GUI loop's jobs are one
table of `PairJob`s whose declared result types are their functions' (no per-job wrappers)."""

from __future__ import annotations

import typing

from inspector.core.requantize import jobs
from inspector.core.runtime import worker


def test_run_isolated_is_generic_over_the_job_result():
    hints = typing.get_type_hints(worker.run_isolated)
    r = hints["return"]
    assert isinstance(r, typing.TypeVar)
    assert typing.get_args(hints["fn"])[-1] is r
    assert typing.get_type_hints(worker.WorkerProcess.run)["return"] is r


def test_the_job_table_declares_what_each_job_returns():
    declared = typing.get_type_hints(jobs)
    names = [n for n, v in vars(jobs).items() if isinstance(v, worker.PairJob)]
    assert sorted(names) == sorted(n for n in declared if typing.get_origin(declared[n]) is worker.PairJob)
    assert {id(vars(jobs)[n]) for n in names} == {id(j) for j in jobs.PAIR_JOBS}
    for n in names:
        job = vars(jobs)[n]
        assert typing.get_args(declared[n]) == (typing.get_type_hints(job.fn)["return"],), n


def test_a_pair_job_runs_isolated_with_its_step_and_models(monkeypatch):
    seen = {}

    def fake(fn, *args, task=None, step="", models=()):
        seen.update(fn=fn, args=args, step=step, models=models)
        return "done"

    monkeypatch.setattr(worker, "run_isolated", fake)
    assert jobs.SURGICAL_EDIT("a.tflite", "b.tflite", 1, 2) == "done"
    assert seen == {"fn": jobs.surgical_job, "args": ("a.tflite", "b.tflite", 1, 2),
                    "step": jobs.SURGICAL_EDIT.step, "models": ("a.tflite", "b.tflite")}  # fmt: skip


def test_the_gui_keeps_no_wrapper_per_job():
    import ast
    from pathlib import Path

    gui = Path(worker.__file__).parents[2] / "gui"
    names = [(f.name, n.name if isinstance(n, ast.FunctionDef) else n.targets[0].id)
             for f in sorted(gui.rglob("*.py")) for n in ast.walk(ast.parse(f.read_text()))
             if isinstance(n, ast.FunctionDef) or (isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name))]
    assert names and not [x for x in names if x[1].endswith("_thread")]  # the Worker runs core's job table directly


def test_the_cli_runs_the_jobs_of_the_gui_table(fixture_path, tmp_path, monkeypatch, capsys):
    """One job each: `requantize FLOAT QUANT`, `suggest` (surgical route) and `suggest --route
    quantizer` hand the worker the very functions of SURGICAL_EDIT, SURGICAL_SUGGEST and SUGGEST
    (the CLI had near-twins of them), with no output path: the CLI writes the model itself."""
    from inspector.cli import main
    from inspector.core.errors import InputError

    ran = []

    def fake(fn, *args, task=None, step="", models=(), **kw):
        ran.append((fn, args))
        raise InputError("stopped by the test")

    monkeypatch.setattr(worker, "run_isolated", fake)
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    assert main(["requantize", f, q, "--out", str(tmp_path / "x.tflite"), "--keep-float", "op:12"]) == 2
    assert main(["suggest", f, q, "--target-sqnr", "40"]) == 2
    assert main(["suggest", f, q, "--target-sqnr", "40", "--route", "quantizer"]) == 2
    assert "stopped by the test" in capsys.readouterr().err
    assert [fn for fn, _ in ran] == [jobs.SURGICAL_EDIT.fn, jobs.SURGICAL_SUGGEST.fn, jobs.SUGGEST.fn]
    assert [len(args) for _, args in ran] == [3, 4, 4]  # (float, quant, plan) / (float, quant, target, options): defaults for the rest
