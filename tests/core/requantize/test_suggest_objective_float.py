"""Suggest's objective after keep-float edits that make the objective op and all its readers
float: keep-float drops B's int8 objective tensor (nobody reads it) and carries the value on as
NAME/float. Suggest on the bundled example pair, objective logits (op 9 of today's example, the
GUI's default there), failed with "the edited model has no tensor 'cnn_1/logits_1/MatMul1'" as
soon as its group search kept the logits and the softmax float together.

Independent reference: both models run on LiteRT's reference kernels with
`experimental_preserve_all_tensors`, the SQNR of the float twin tensor in numpy.
"""

from __future__ import annotations

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.compare.pairing import pair_models
from inspector.core.requantize.objective import Objective, TempModel
from inspector.core.requantize.suggest_surgical import SurgicalSuggestOptions, suggest_surgical
from inspector.core.requantize.surgical import apply_plan, plan_samples
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from inspector.paths import example_inputs
from tests.helpers.reference import preserving_interpreter, sqnr_db

LOGITS_OP = 9  # FULLY_CONNECTED logits -> 10 SOFTMAX


@pytest.fixture(scope="module")
def edited(example_pair):
    f, q = (str(p) for p in example_pair)
    fm, qm = load_model(f), load_model(q)
    settings = SampleSettings(count=4, source=str(example_inputs()))
    samples = plan_samples(SurgicalPlan((), settings), fm, qm)
    data = apply_plan(f, q, SurgicalPlan((Edit("keep_float", "", ops=(LOGITS_OP, LOGITS_OP + 1)),), settings), samples).model_bytes
    return f, q, fm, qm, samples, data


def test_objective_reads_the_float_twin_of_a_dropped_tensor(edited):
    f, q, fm, qm, samples, data = edited
    name = qm.main.tensors[qm.main.ops[LOGITS_OP].outputs[0]].name
    obj = Objective(fm, qm, pair_models(fm, qm), [qm.main.ops[LOGITS_OP].outputs[0]], samples, "reference")
    got = obj.sqnr(data)  # raised InputError before
    # Reference: A's logits and the edited model's NAME/float, read from preserving interpreters.
    with TempModel(data) as path:
        it_b = preserving_interpreter(path)
        it_a = preserving_interpreter(f)
        b_idx = {d["name"]: d["index"] for d in it_b.get_tensor_details()}
        assert name not in b_idx and f"{name}/float" in b_idx  # the case this test is about
        a_logits = next(d["index"] for d in it_a.get_tensor_details() if d["name"] == fm.main.tensors[
            pair_models(fm, qm).float_for_quant(qm.main.ops[LOGITS_OP].outputs[0])].name)  # fmt: skip
        ref, out = [], []
        for s in samples:
            x = np.asarray(s.inputs[0], np.float32)
            for it in (it_a, it_b):
                it.set_tensor(it.get_input_details()[0]["index"], x)
                it.invoke()
            ref.append(it_a.get_tensor(a_logits).astype(np.float64))
            out.append(it_b.get_tensor(b_idx[f"{name}/float"]).astype(np.float64))
    assert got == pytest.approx(sqnr_db(np.concatenate(ref), np.concatenate(out)), abs=0.01)


def test_cli_suggest_on_the_logits_of_the_example(example_pair, capsys):
    f, q = (str(p) for p in example_pair)
    code = main(["suggest", f, q, "--objective", f"op:{LOGITS_OP}", "--target-sqnr", "40", "--max-float-layers", "2"])
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err  # exit 2 with "the edited model has no tensor" before
    assert "no tensor" not in captured.err


def test_group_search_keeps_the_layer_budget(example_pair):
    """`--max-float-layers 2` / the GUI's "at most 2 edits": when no single layer gave 0.5 dB (8
    random samples here), the group search kept the 7 worst layers float in one step."""
    f, q = (str(p) for p in example_pair)
    opts = SurgicalSuggestOptions(objective=f"op:{LOGITS_OP}", max_steps=2)
    r = suggest_surgical(f, q, 40.0, opts)
    edited = {op for s in r.steps for op in s.ops}
    assert len(edited) <= 2, [(s.ops, s.edit) for s in r.steps]
    if r.plan is not None:
        assert len({op for e in r.plan.edits for op in e.ops}) <= 2

