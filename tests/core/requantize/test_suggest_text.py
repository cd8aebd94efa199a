"""Suggest's text (both routes, one renderer) says one consistent thing about the open model B.

Checked on the trained classifier with one damaged layer (`task` fixtures): the ops the text
names are B's (their types read back from B with the independent `tflite` package), every count
is stated against what it counts, and no note contradicts a step above it. The command line's
reproduce line and budgets come from the option dataclasses the GUI uses.
"""

from __future__ import annotations

import re

import pytest

from inspector.cli import main
from inspector.core.requantize.suggest_options import SuggestOptions, SurgicalSuggestOptions
from inspector.core.samples.settings import SampleSettings
from tests.helpers.paths import REPO
from tests.helpers.task_fixtures import TaskFixtures


@pytest.fixture(scope="module")
def broken():
    m = TaskFixtures(REPO / ".fixture-cache").models()
    return m["cls_float"], m["cls_int8_broken"]


def _b_types(path) -> list[str]:
    import tflite

    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    sg = m.Subgraphs(0)
    out = []
    for i in range(sg.OperatorsLength()):
        oc = m.OperatorCodes(sg.Operators(i).OpcodeIndex())
        out.append(names[max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())])
    return out


def _named_ops(text: str) -> list[tuple[int, str]]:
    return [(int(i), t) for i, t in re.findall(r"\bop (\d+) ([A-Z_0-9]+)\b", text)]


def test_quantizer_route_names_the_ops_of_b(broken):
    """The quantizer route regenerates from the float model (other op indices): its text used to
    name the float model's op 1 as 'op 1 CONV_2D' while op 1 of B is another layer."""
    from inspector.core.requantize.suggest import suggest
    from inspector.core.viewdata.suggest_view import suggest_text, suggest_view

    f, q = broken
    r = suggest(f, q, 500.0, SuggestOptions(samples=SampleSettings(count=4), candidates=2, max_layers=1, max_evaluations=3))
    text = suggest_text(r)
    b = _b_types(q)
    named = _named_ops(text)
    assert named and all(b[i] == t for i, t in named), (named, b)
    worst = r.candidates[0]
    assert worst["quant_op"] != worst["op"]  # this pair's indices differ: B has a QUANTIZE first
    assert f"op {worst['quant_op']} {b[worst['quant_op']]}" in text
    assert f"float model's op {worst['op']}" in text  # the plan's index, said as such
    view = suggest_view(r)
    assert [p.label for p in view.points][:1] == ["given"] and view.best is not None
    assert len(view.candidates) == 2 and f"the 2 worst of {r.ranked} ranked layers" in text


def test_surgical_text_counts_once_and_does_not_contradict_its_steps(broken):
    from inspector.core.requantize.suggest_surgical import suggest_surgical
    from inspector.core.viewdata.suggest_view import suggest_text

    f, q = broken
    r = suggest_surgical(str(f), str(q), 500.0, SurgicalSuggestOptions(samples=SampleSettings(count=4), candidates=3,
                                                                       max_steps=2, max_evaluations=12))  # fmt: skip
    text = suggest_text(r)
    assert r.steps and "MSE weights on op 2 CONV_2D" in text  # the diagnosis' edit of the damaged layer
    b = _b_types(q)
    assert all(b[i] == t for i, t in _named_ops(text))
    # Both routes rank the same ops: every op of B but QUANTIZE/DEQUANTIZE here, SOFTMAX included
    # (the surgical route used to skip it; the quantizer route did not).
    assert "SOFTMAX" in b and r.ranked == sum(t not in ("QUANTIZE", "DEQUANTIZE") for t in b)
    # A step gained more than SINGLE_OP_MIN_GAIN_DB, so no line may say no single op gives it.
    assert "no single" not in text
    # One count of candidates and of ranked layers, the same everywhere.
    assert f"the 3 worst of {r.ranked} ranked layers" in text and len(r.candidates) == 3
    for n, of in re.findall(r"the (\d+) ranked layers it applies to \(of (\d+)\)", text):
        assert int(of) == r.ranked and int(n) <= r.ranked
    assert not re.search(r"\ball \d+ candidate", text)
    assert f"{r.evaluations} edit+validate+measure evaluations" in text
    assert [p.edits for p in r.points][0] and r.to_json()["points"][0]["edits"]  # JSON keys kept


def _fake_surgical(monkeypatch, seen):
    from inspector.core.requantize.suggest_surgical import SurgicalSuggestResult
    from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
    from inspector.core.runtime import worker

    def fake(job, f, q, target, opts, **kw):
        seen.append(opts)
        plan = SurgicalPlan((Edit("bias_correct", "op:2", ops=(2,)),), opts.samples)
        return SurgicalSuggestResult(target, ("out",), True, 10.0, 20.0, 100, 1.0, [], plan, evaluations=1)

    monkeypatch.setattr(worker, "run_isolated", fake)


def test_cli_reproduce_line_and_budget_without_sample_flags(broken, monkeypatch, capsys):
    """No --samples/--inputs: the reproduce line said '--samples None'; the CLI's budget was 24
    evaluations where the GUI's (SurgicalSuggestOptions) is 40."""
    seen: list = []
    _fake_surgical(monkeypatch, seen)
    f, q = broken
    assert main(["suggest", str(f), str(q), "--target-sqnr", "15"]) == 0
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.startswith("reproduce:"))
    assert not re.search(r"\bNone\b", line)
    assert f"--bias-correct op:2 --samples {SampleSettings().random_count} --seed 0" in line
    assert seen[0].max_evaluations == SurgicalSuggestOptions().max_evaluations
    assert seen[0].candidates == SurgicalSuggestOptions().candidates


def test_cli_reproduce_line_with_inputs(broken, monkeypatch, capsys, tmp_path):
    import numpy as np

    seen: list = []
    _fake_surgical(monkeypatch, seen)
    f, q = broken
    npz = tmp_path / "my inputs.npz"
    np.savez(npz, x=np.zeros((2, 1), np.float32))
    assert main(["suggest", str(f), str(q), "--target-sqnr", "15", "--inputs", str(npz), "--max-evaluations", "7"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("reproduce:"))
    assert f"--inputs '{npz}'" in line and "--samples" not in line and seen[0].max_evaluations == 7
