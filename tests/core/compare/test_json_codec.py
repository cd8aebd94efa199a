"""The result types' JSON through the one codec (`codec.json_record`), on a real comparison of the
bundled example: every type reads back equal to what was written, and the written form is the
contract's: key names, key order, null for infinities, optional keys only when set, rounding.

The expected dicts below are written out by hand from the contract (issue 3's "compare" JSON,
issue 14's parity JSON, issue 21/33's diagnosis and blame), not produced by the code under test."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis_types import Blame, Diagnosis, Fix, RootCause
from inspector.core.compare.inside import ChannelStats, SliceStats
from inspector.core.compare.parity_result import (
    Difference,
    LayerParity,
    OutputParity,
    RuntimeParityResult,
)
from inspector.core.compare.result import (
    ComparisonResult,
    LayerResult,
    OutputResult,
    PerSampleOutputs,
)
from inspector.core.compare.runtime_parity import compare_runtimes
from inspector.core.stats.metrics import METRIC_KEYS, Metrics
from inspector.core.writing import to_json_text
from inspector.paths import example_pair

LAYER_KEYS = ["op_index", "op_type", "tensor_name", "float_tensor", "quant_tensor", "match", "metrics", "isolated",
              "isolated_note", "float_op_index", "dtype", "shape", "num_elements", "scale", "zero_point",
              "quantized_dimension", "float_min", "float_max", "diagnosis", "channels"]  # fmt: skip
RESULT_KEYS = ["float", "quant", "runtime", "samples", "layers", "unmatched", "outputs", "schema_version", "kernels",
               "isolated_run", "seed", "inputs", "labels", "sources", "class_names", "elapsed_s", "samples_are_random",
               "swapped", "pair_check", "signature", "reference", "stateful", "state", "root_causes", "blame_note", "task"]  # fmt: skip


@pytest.fixture(scope="module")
def result() -> ComparisonResult:
    f, q = example_pair()
    return compare_models(str(f), str(q), CompareOptions())


def _through_text(d: dict) -> dict:
    """What a reader of the written file gets (the writer refuses inf/nan: they must be null)."""
    return json.loads(to_json_text(d))


def test_comparison_round_trips(result: ComparisonResult) -> None:
    d = _through_text(result.to_json(include_per_sample=True))
    back = ComparisonResult.from_json(d)
    assert back.layers == result.layers
    assert back.outputs == result.outputs
    assert back.root_causes == result.root_causes
    assert back.pair_check == result.pair_check
    assert back.per_sample_outputs is not None and result.per_sample_outputs is not None
    for a, b in zip(back.per_sample_outputs.float + back.per_sample_outputs.quant,
                    result.per_sample_outputs.float + result.per_sample_outputs.quant, strict=True):  # fmt: skip
        assert all(x.dtype == y.dtype and (x == y).all() for x, y in zip(a, b, strict=True))
    # everything but what is read from "task" and the values kept in memory is a field: equal
    same = replace(back, per_sample_outputs=result.per_sample_outputs, task_json=None, output_kinds=result.output_kinds,
                   elapsed_s=result.elapsed_s)  # fmt: skip
    assert same == result
    assert back.elapsed_s == round(result.elapsed_s, 4)
    # and written again, the same text
    assert to_json_text(back.to_json(include_per_sample=True)) == to_json_text(d)


def test_every_nested_type_round_trips(result: ComparisonResult) -> None:
    seen: set[type] = set()
    for layer in result.layers:
        for obj in (layer, layer.metrics, layer.isolated, layer.diagnosis, layer.channels,
                    None if layer.diagnosis is None else layer.diagnosis.fix):  # fmt: skip
            if obj is not None:
                assert type(obj).from_json(_through_text(obj.to_json())) == obj
                seen.add(type(obj))
    for o in result.outputs:
        assert OutputResult.from_json(_through_text(o.to_json())) == o
        seen.add(OutputResult)
    assert {LayerResult, Metrics, Diagnosis, ChannelStats, Fix, OutputResult} <= seen
    pso = result.per_sample_outputs
    assert pso is not None
    back = PerSampleOutputs.from_json(_through_text(pso.to_json()))
    assert back.names == pso.names and back.float[0][0].dtype.name == "float32"


def test_blame_and_slices_round_trip() -> None:
    # values a real run gives (a blamed layer; a concatenation's slice); inf written as null
    d = Diagnosis("inherited", "error comes from op 4 (CONV_2D)", Fix("keep_float", (4,)), 4, Blame(0.25, math.inf))
    j = _through_text(d.to_json())
    assert j == {"cause": "inherited", "evidence": "error comes from op 4 (CONV_2D)", "fix": {"edit": "keep_float", "ops": [4]},
                 "blame": {"share": 0.25, "gain_db": None}}  # fmt: skip
    assert Diagnosis.from_json(j) == d  # source_op read back from the evidence
    s = SliceStats(1, 3, 7, math.inf, 0.5, None, 12, 40, 9, "LOGISTIC", -1.0, 2.5, 0.0, 3)
    js = _through_text(s.to_json())
    assert list(js) == ["input", "start", "stop", "sqnr_db", "range_use", "steps_used", "concat_op", "tensor",
                        "producer_op", "producer_type", "float_min", "float_max", "rmse", "axis"]  # fmt: skip
    assert js["sqnr_db"] is None and SliceStats.from_json(js) == s


def test_root_cause_spreads_accuracy_over_three_keys() -> None:
    # as `requantize.blame` makes them (compare --blame): the input range fix changes the interface
    r = RootCause(-1, "", "input_range", 0.5, math.inf, Fix("input_range", (0,)), 3.25, "clamp input", "changes the input",
                  (0.9, 0.8, 0.875), {"scale": 0.5, "zero_point": -3})  # fmt: skip
    d = _through_text(r.to_json())
    assert d == {"op_index": -1, "cause": "input_range", "share": 0.5, "gain_db": None, "fix": {"edit": "input_range", "ops": [0]},
                 "fix_gain_db": 3.25, "op_type": "", "intervention": "clamp input", "note": "changes the input",
                 "accuracy_float": 0.9, "accuracy_before": 0.8, "accuracy_after": 0.875,
                 "interface_change": {"scale": 0.5, "zero_point": -3}}  # fmt: skip
    assert list(d)[-4:] == ["accuracy_float", "accuracy_before", "accuracy_after", "interface_change"]
    assert RootCause.from_json(d) == r
    plain = replace(r, accuracy=None, interface_change=None, fix=None, fix_gain_db=None)
    assert list(plain.to_json())[-1] == "note" and RootCause.from_json(plain.to_json()) == plain


def test_layer_json_is_the_contract(result: ComparisonResult) -> None:
    layer = result.layers[0]
    d = layer.to_json()
    assert list(d) == LAYER_KEYS  # no "slices": the example has no concatenation
    m = layer.metrics
    assert d["metrics"] == {"mse": m.mse, "sqnr_db": m.sqnr_db, "max_abs": m.max_abs, "mean_error": m.mean_error,
                            "cosine": m.cosine, "rmse_over_scale": m.rmse_over_scale, "clip_rate": m.clip_rate,
                            "range_use": m.range_use, "count": m.count}  # fmt: skip
    assert d["shape"] == list(layer.shape) and d["num_elements"] == math.prod(layer.shape)
    assert d["scale"] == list(layer.scale or ()) and d["zero_point"] == list(layer.zero_point or ())
    assert d["diagnosis"] is not None and list(d["diagnosis"]) == ["cause", "evidence", "fix", "blame"]
    top = result.to_json()
    assert list(top) == RESULT_KEYS
    assert top["schema_version"] == 1 and top["isolated_run"] is True and top["stateful"] is False
    assert top["elapsed_s"] == round(result.elapsed_s, 4)
    assert "per_sample_outputs" not in top and "per_sample_outputs" in result.to_json(include_per_sample=True)


def test_metrics_hand_written_form() -> None:
    m = Metrics(0.25, math.inf, 1.5, -0.125, None, 0.5, 0.0, 0.75, 8, (10.0, math.inf, -math.inf), (0.5, -0.5), (0.1, math.nan))
    assert m.to_json() == {"mse": 0.25, "sqnr_db": None, "max_abs": 1.5, "mean_error": -0.125, "cosine": None,
                           "rmse_over_scale": 0.5, "clip_rate": 0.0, "range_use": 0.75, "count": 8,
                           "per_channel_sqnr_db": [10.0, None, None], "per_channel_mean_error": [0.5, -0.5],
                           "per_channel_mean_stderr": [0.1, None]}  # fmt: skip
    back = Metrics.from_json(_through_text(m.to_json()))
    assert back.sqnr_db == math.inf and back.per_channel_sqnr_db == (10.0, math.inf, math.inf)
    assert back.per_channel_mean_stderr is not None and math.isnan(back.per_channel_mean_stderr[1])
    plain = Metrics(0.25, 6.0, 1.5, 0.0, 0.9, None, None, None, 8)
    assert list(plain.to_json()) == [*METRIC_KEYS, "count"]  # per-channel keys only when measured
    assert Metrics.from_json(plain.to_json()) == plain


def test_channel_stats_write_minus_inf_as_text() -> None:
    c = ChannelStats(3, (12.0, -math.inf, math.inf), (0.0, 0.0, -1.0), (1.0, 0.0, 1.0), (0.0, 0.5, 0.0), (0.5, 0.5, 0.5), (2.0, 2.0, 2.0))
    d = _through_text(c.to_json())
    assert list(d) == ["axis", "count", "worst", "range_ratio", "sqnr_db", "float_min", "float_max", "clip_rate", "scale", "range_width"]
    assert d["sqnr_db"] == [12.0, "-inf", None]
    assert d["count"] == 3 and d["worst"] == {"index": 1, "sqnr_db": None, "range_use": 0.0}
    assert ChannelStats.from_json(d) == c


def test_parity_round_trips_with_its_contract_keys() -> None:
    _, q = example_pair()
    p = compare_runtimes(str(q))
    d = _through_text(p.to_json())
    assert list(d) == ["model", "runtimes", "threads", "samples", "layers", "outputs", "labels", "samples_are_random",
                       "inputs", "signature", "subgraph"]  # fmt: skip
    assert list(d["layers"][0]) == ["op_index", "op_type", "tensor_name", "differ_share", "max_lsb", "first_divergence",
                                    "spec_mismatch", "tensor_index"]  # fmt: skip
    assert list(d["outputs"][0]) == ["name", "differ_share", "max_lsb", "tensor_index"]
    back = RuntimeParityResult.from_json(d)
    assert back == p
    # a session saved before "labels", "tensor_index" and "subgraph" existed still reads
    old = {k: v for k, v in d.items() if k not in ("labels", "subgraph")}
    old["layers"] = [{k: v for k, v in x.items() if k != "tensor_index"} for x in d["layers"]]
    back = RuntimeParityResult.from_json(old)
    assert back.labels == ("reference", "optimized") and back.subgraph == 0
    assert all(x.tensor_index == -1 for x in back.layers)
    assert LayerParity.from_json({"op_index": 2, "op_type": "ADD", "tensor_name": "t", "differ_share": 0, "max_lsb": None,
                                  "first_divergence": False, "spec_mismatch": {"a": {"differ_share": 0.5, "max_lsb": 1.0}}}) == \
        LayerParity(2, "ADD", "t", -1, 0.0, None, False, {"a": Difference(0.5, 1.0)})  # fmt: skip
    assert OutputParity.from_json({"name": "y", "differ_share": 1, "max_lsb": 2}).differ_share == 1.0
