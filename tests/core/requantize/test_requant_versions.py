"""Requantize loop core: version deltas against hand-computed SQNRs, version names, panel choices
-> plan overrides, the algorithms offered per op type vs litert-quantizer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.result import ComparisonResult, LayerResult, OutputResult
from inspector.core.requantize.choices import (
    TREATMENT_CHOICES,
    algorithms_for,
    choice_of,
    describe_plan,
    op_rows,
    override_for,
    short_layer_name,
    version_name,
)
from inspector.core.requantize.delta import db_delta, output_sqnr_db, version_delta
from inspector.core.requantize.plan import Override, Plan
from inspector.core.stats.metrics import compute_metrics
from inspector.core.tflite.model import Model
from tests.helpers.reference import sqnr_db as _sqnr


def _result(quant: str, layers: dict[int, tuple[np.ndarray, np.ndarray]], outputs: list[tuple[np.ndarray, np.ndarray]]):
    rows = tuple(
        LayerResult(op_index=i, op_type="CONV_2D", tensor_name=f"t{ft}", float_tensor=ft, quant_tensor=100 + ft,
                    match="name", metrics=compute_metrics(x, y), float_op_index=ft, dtype="int8")
        for i, (ft, (x, y)) in enumerate(layers.items())
    )  # fmt: skip
    outs = tuple(OutputResult(f"out{k}", 0, 0, compute_metrics(x, y)) for k, (x, y) in enumerate(outputs))
    return ComparisonResult("f.tflite", quant, "optimized", "", 2, rows, (), outs)


def test_version_delta_matches_hand_sqnr():
    rng = np.random.default_rng(0)
    x = {ft: rng.normal(size=200).astype(np.float32) for ft in (1, 2, 3, 4)}
    noisy = {ft: v + rng.normal(scale=0.05 * ft, size=200).astype(np.float32) for ft, v in x.items()}
    better = {ft: v + rng.normal(scale=0.01, size=200).astype(np.float32) for ft, v in x.items()}
    out_x = rng.normal(size=10).astype(np.float32)
    out_a, out_b = out_x + 0.1, out_x + 0.01
    before = _result("v0", {ft: (x[ft], noisy[ft]) for ft in (1, 2, 3)}, [(out_x, out_a), (out_x, out_x + 0.2)])
    after = _result("v1", {1: (x[1], better[1]), 2: (x[2], x[2]), 4: (x[4], better[4])}, [(out_x, out_b), (out_x, out_b)])
    d = version_delta(before, after, 1000, 1300, ("v0", "v1"))

    rows = {r.float_tensor: r for r in d.rows}
    assert [r.float_tensor for r in d.rows] == [1, 2, 4, 3]  # after's order, then layers only before had
    assert rows[1].before_db == pytest.approx(_sqnr(x[1], noisy[1]), rel=1e-5)
    assert rows[1].after_db == pytest.approx(_sqnr(x[1], better[1]), rel=1e-5)
    assert rows[1].delta_db == pytest.approx(_sqnr(x[1], better[1]) - _sqnr(x[1], noisy[1]), rel=1e-5)
    assert math.isinf(rows[2].after_db) and math.isinf(rows[2].delta_db) and rows[2].delta_db > 0  # now exact
    assert rows[4].before_db is None and rows[4].delta_db is None  # new layer
    assert rows[3].after_db is None and rows[3].delta_db is None  # gone
    # the layer identifier: B's op index in the 'after' model (the 'before' model's for a layer gone)
    assert [rows[ft].op_index for ft in (1, 2, 4, 3)] == [0, 1, 2, 2]
    # Output SQNR = the worst output, on both sides.
    assert d.output_before_db == pytest.approx(min(_sqnr(out_x, out_a), _sqnr(out_x, out_x + 0.2)), rel=1e-5)
    assert d.output_after_db == pytest.approx(_sqnr(out_x, out_b), rel=1e-5)
    assert d.output_delta_db == pytest.approx(d.output_after_db - d.output_before_db)
    assert d.size_ratio == pytest.approx(1.3)
    assert [r.float_tensor for r in d.changed()] == [2, 1]  # infinite gain first
    j = d.to_json()
    assert j["layers"][1]["after_sqnr_db"] is None and j["size_bytes"] == {"before": 1000, "after": 1300}


def test_db_delta_edges():
    assert db_delta(None, 3.0) is None and db_delta(3.0, float("nan")) is None
    assert db_delta(math.inf, math.inf) == 0.0
    assert db_delta(math.inf, 20.0) == -math.inf
    assert db_delta(10.0, 12.5) == 2.5
    assert output_sqnr_db(None) is None


def test_choices_become_overrides_and_back():
    assert override_for(11, "keep_float", "mse") == Override("op:11", "keep_float", None, None)
    assert override_for(3, "int8_tensor", "octav") == Override("op:3", "int8", False, "octav")
    assert override_for(3, "int8_channel") == Override("op:3", "int8", True, None)
    for c in TREATMENT_CHOICES:
        assert choice_of(override_for(5, c.key)) == c.key
    plan = Plan(overrides=(override_for(4, "a16w8", "mse"), override_for(11, "keep_float"), override_for(4, "dynamic")))
    assert op_rows(plan) == [(4, "dynamic", None), (11, "keep_float", None)]  # last override of an op wins


def test_algorithms_offered_are_the_quantizers():
    from litert_quantizer import algorithm_manager

    from inspector.core.requantize.plan import ALGORITHMS

    for op in ("CONV_2D", "FULLY_CONNECTED", "SOFTMAX", "ADD", "MAX_POOL_2D", "SOME_CUSTOM_OP"):
        want = tuple(n for n, k in ALGORITHMS.items() if n == "min_max" or algorithm_manager.is_op_registered(k, op))
        assert algorithms_for(op) == want
    assert "mse" in algorithms_for("CONV_2D") and "mse" not in algorithms_for("SOFTMAX")


def test_version_names(example_pair):
    fm = Model(str(example_pair[0]))
    assert short_layer_name(fm, 3) == "pw1"  # digits_1/pw1_1/Relu6;...
    assert short_layer_name(fm, 8) == "logits"
    assert short_layer_name(fm, 9) == "softmax"  # a bare signature name: the op type
    plan = Plan(overrides=(override_for(8, "keep_float"), override_for(9, "keep_float"), override_for(3, "a16w8")))
    assert version_name(1, plan, fm) == "v1 keep-float logits, softmax; a16w8 pw1"
    assert version_name(2, Plan(base="a16w8"), fm) == "v2 base a16w8"
    assert version_name(3, Plan(), fm, "suggest") == "v3 suggest: int8, no overrides"
    mse = Plan(overrides=(override_for(3, "int8_tensor", "mse"),))
    assert describe_plan(mse, fm) == "int8-per-tensor (MSE) pw1"
