"""The surgical route's panel choices -> plan edits, version names, the edit marks of a version
delta (matched through model A's tensor when the edit renumbers B's ops), and the logits
objective Suggest uses for a softmax model."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.requantize.choices import (
    EDIT_CHOICES,
    describe_surgical,
    edit_choice_of,
    edit_for,
    edit_label,
    edit_marks,
    logits_objective,
)
from inspector.core.requantize.delta import version_delta
from inspector.core.requantize.surgical_plan import KINDS, Edit, SurgicalPlan, check_calibration
from inspector.core.stats.metrics import compute_metrics
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO

EXAMPLES = REPO / "inspector" / "resources" / "examples"


def test_every_choice_is_a_valid_edit_and_round_trips():
    for c in EDIT_CHOICES:
        e = edit_for(7, c.key)
        assert e.kind in KINDS and e.pattern == "op:7" and e.ops == (7,)
        if e.kind == "recalibrate":
            check_calibration(e.calibration)  # raises for an invalid method
        assert edit_choice_of(e.kind, e.calibration) == c.key
        assert c.tip
    assert {c.kind for c in EDIT_CHOICES} == set(KINDS)  # the panel offers every edit the core has
    with pytest.raises(ValueError):
        edit_choice_of("recalibrate", "percentile:90")


def test_version_names_and_marks_on_the_example():
    qm = load_model(str(EXAMPLES / "example_int8.tflite"))
    plan = SurgicalPlan((Edit("keep_float", "op:9", ops=(9,)), Edit("recalibrate", "op:6", "mse", (6,)),
                         Edit("bias_correct", "op:2", ops=(2,))))  # fmt: skip
    assert describe_surgical(plan, qm) == "keep-float op 9 logits; recalibrated-mse op 6 dw2; bias-corrected op 2 conv1"
    assert describe_surgical(SurgicalPlan(()), qm) == "no edits"
    assert edit_marks(plan) == {9: "keep float", 6: "re-calibrated (mse)", 2: "bias correction"}
    assert edit_label("recalibrate") == "re-calibrated"
    # The op feeding the softmax (through no QUANTIZE here) is the logits FULLY_CONNECTED.
    assert logits_objective(qm) == "op:9" and qm.main.ops[9].type == "FULLY_CONNECTED"
    assert qm.main.ops[10].type == "SOFTMAX" and qm.main.ops[10].inputs[0] in qm.main.ops[9].outputs
    fm = load_model(str(EXAMPLES / "example_float.tflite"))
    assert logits_objective(fm) == "op:8"


def _layer(op: int, ft: int, x: np.ndarray, y: np.ndarray) -> LayerResult:
    return LayerResult(op_index=op, op_type="CONV_2D", tensor_name=f"t{ft}", float_tensor=ft, quant_tensor=100 + op,
                       match="name", metrics=compute_metrics(x, y), float_op_index=ft, dtype="int8")  # fmt: skip


def test_delta_marks_follow_model_a_tensor_across_renumbering():
    """The edit names 'before' B's op 3 (float tensor 30); in 'after' B that layer is op 4 (a
    DEQUANTIZE was inserted before it): the row of tensor 30 carries the mark, no other row does."""
    x = np.linspace(-1, 1, 64, dtype=np.float32)
    before = ComparisonResult("f", "b0", "optimized", "", 1, (_layer(1, 10, x, x + 0.01), _layer(3, 30, x, x + 0.02)), (), ())
    after = ComparisonResult("f", "b1", "optimized", "", 1, (_layer(1, 10, x, x + 0.01), _layer(4, 30, x, x)), (), ())
    d = version_delta(before, after, 10, 12, ("v0", "v1"), edits={3: "keep float"})
    (row,) = d.edited()
    assert row.float_tensor == 30 and row.op_index == 4 and row.edit == "keep float"
    assert row.to_json()["edit"] == "keep float"
    assert not version_delta(before, after, 10, 12).edited()  # without edits nothing is marked
