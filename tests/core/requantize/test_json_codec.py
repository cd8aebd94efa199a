"""The JSON of plans, trade-off points, deltas and suggestion steps through the one codec
(`codec.json_record`): the forms saved plans, sessions and `suggest --json` have always had,
written out by hand here (key names, key order, keys only when set, null for infinities)."""

from __future__ import annotations

import json
import math

from inspector.core.requantize.delta import LayerDelta
from inspector.core.requantize.plan import Override, Plan
from inspector.core.requantize.suggest_surgical import Step
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.requantize.tradeoff import TradeoffPoint
from inspector.core.samples.settings import SampleSettings
from inspector.core.writing import to_json_text


def _text(d: dict) -> dict:
    return json.loads(to_json_text(d))


def test_plan() -> None:
    p = Plan("int8", (Override("op:1", "keep_float"), Override("conv.*", "int8", per_channel=False, algorithm="mse")), False)
    d = _text(p.to_json())
    assert d == {"base": "int8", "per_channel": False, "algorithm": "min_max", "float_io": True,
                 "overrides": [{"selector": "op:1", "treatment": "keep_float"},
                               {"selector": "conv.*", "treatment": "int8", "per_channel": False, "algorithm": "mse"}]}  # fmt: skip
    assert list(d) == ["base", "per_channel", "algorithm", "float_io", "overrides"]
    assert Plan.from_json(d) == p
    assert Plan.from_json({}) == Plan()  # every key optional


def test_surgical_plan() -> None:
    p = SurgicalPlan((Edit("recalibrate", "op:3", "mse", (3,)), Edit("equalize", "op:1", None, (1, 2))),
                     SampleSettings(count=4, seed=3), "ab", None, "serve")  # fmt: skip
    d = _text(p.to_json())
    assert d == {"version": 2, "route": "surgical",
                 "edits": [{"kind": "recalibrate", "pattern": "op:3", "ops": [3], "calibration": "mse"},
                           {"kind": "equalize", "pattern": "op:1", "ops": [1, 2], "edit": "equalize"}],
                 "samples": {"count": 4, "seed": 3, "source": None, "normalization": None},
                 "float_sha256": "ab", "quant_sha256": None, "signature": "serve"}  # fmt: skip
    assert list(d) == ["version", "route", "edits", "samples", "float_sha256", "quant_sha256", "signature"]
    assert SurgicalPlan.from_json(d) == p
    assert SampleSettings(carry_state=True).to_json()["carry_state"] is True  # written only when set
    assert "carry_state" not in SampleSettings().to_json()


def test_tradeoff_delta_and_step() -> None:
    pts = [TradeoffPoint("a", (1, 2), 10, math.inf, ("keep_float op:1",)), TradeoffPoint("b", (), 5, 3.5)]
    assert [_text(p.to_json()) for p in pts] == [
        {"label": "a", "layers": [1, 2], "size_bytes": 10, "output_sqnr_db": None},
        {"label": "b", "layers": [], "size_bytes": 5, "output_sqnr_db": 3.5}]  # fmt: skip
    row = LayerDelta(17, 2, "DEPTHWISE_CONV_2D", "dw", 39.5, 41.0, "int8", "int8", 3, "recalibrate")
    d = _text(row.to_json())
    assert d == {"op_index": 3, "float_tensor": 17, "float_op_index": 2, "op_type": "DEPTHWISE_CONV_2D", "tensor_name": "dw",
                 "before_sqnr_db": 39.5, "after_sqnr_db": 41.0, "delta_db": 1.5, "before_dtype": "int8",
                 "after_dtype": "int8", "edit": "recalibrate"}  # fmt: skip
    assert list(d) == ["op_index", "float_tensor", "float_op_index", "op_type", "tensor_name", "before_sqnr_db",
                       "after_sqnr_db", "delta_db", "before_dtype", "after_dtype", "edit"]  # fmt: skip
    assert LayerDelta.from_json(d) == row
    step = Step((4,), "CONV_2D", "t", "a16w8", 12.5, math.inf, 2048, 0.25)
    assert _text(step.to_json()) == {"ops": [4], "type": "CONV_2D", "tensor": "t", "edit": "a16w8", "gain_db": 12.5,
                                     "objective_sqnr_db": None, "size_bytes": 2048, "latency_ms": 0.25}  # fmt: skip
