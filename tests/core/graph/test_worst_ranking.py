""""Go to worst" ranks by the metric's own value (issue 35, item 4). It ranked by the colour
scale's position, so every value past the scale's end tied (worst channel 8.9 dB and 0 dB both at
the red end) and the tie went to the lowest accumulated SQNR: the deepest layer, which inherits
its error. On the bundled example with the cause metric it selected op 9 (a FULLY_CONNECTED deep
in the net) instead of op 1 (the RESHAPE holding the clipped input, whose error everything
downstream inherits: accumulated 12.5 dB, the lowest own error of a layer with a cause)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.graph.structure import model_graph
from inspector.core.graph.style import cause_rank_value, style_graph
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats.ranking import worst, worst_first
from inspector.core.tflite.model import load_model
from inspector.paths import example_inputs, example_pair


def test_worst_first_orders_by_value_with_missing_values_last_and_unranked():
    vals = [8.9, None, 0.0, float("nan"), -math.inf, 30.0, math.inf, 0.0]
    assert worst_first(vals) == [4, 2, 7, 0, 5, 6]  # -inf, 0 (earlier first), 0, 8.9, 30, +inf
    assert worst_first([0.001, None, 0.2, 0.05], higher_is_better=False) == [2, 3, 0]  # clip rate: highest first
    assert worst([None, float("nan")]) is None and worst([]) is None


@pytest.fixture(scope="module")
def example():
    f, q = example_pair()
    res = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(source=str(example_inputs()))))
    return res, model_graph(load_model(q))


def test_cause_ranks_by_own_error_so_the_source_comes_first(example):
    res, graph = example
    caused = [lay for lay in res.layers if lay.diagnosis is not None and lay.diagnosis.cause not in ("none", "inherited")]
    own = {lay.op_index: cause_rank_value(lay) for lay in caused}
    # the independent reading: isolated SQNR where finite, else the accumulated one
    for lay in caused:
        iso = lay.isolated.sqnr_db if lay.isolated is not None else math.inf
        assert own[lay.op_index] == (iso if math.isfinite(iso) else lay.metrics.sqnr_db)
    expected = min(own, key=own.__getitem__)
    assert expected == 1  # the example's RESHAPE of the clipped input (12.5 dB)
    assert style_graph(graph, res, "cause").worst_op == 1  # was op 9: lowest accumulated SQNR of the tie


def test_worst_channel_past_the_scale_end_ranks_by_its_value(example):
    """Two layers past the red end of the scale (below 10 dB): 0 dB ranks before 8.9 dB even when
    the 8.9 dB layer has the lower accumulated SQNR (the old tie-break)."""
    res, graph = example
    by_op = {lay.op_index: lay for lay in res.layers}
    deep, shallow = 9, 2
    assert by_op[deep].metrics.sqnr_db < by_op[shallow].metrics.sqnr_db  # the old tie-break favoured `deep`

    def with_worst_channel(lay, v):
        out = dataclasses.replace(lay)
        object.__setattr__(out, "channels", {"worst": {"sqnr_db": v}})
        return out

    values = {deep: 8.9, shallow: 0.0}
    layers = tuple(with_worst_channel(lay, values.get(lay.op_index, 40.0)) for lay in res.layers)
    edited = dataclasses.replace(res, layers=layers)
    assert style_graph(graph, edited, "worst_channel").worst_op == shallow
    # and the clip rate (lower is better) by its highest value, the accumulated SQNR by its lowest
    rates = {lay.op_index: lay.metrics.clip_rate for lay in res.layers if lay.metrics.clip_rate is not None}
    assert style_graph(graph, res, "clip").worst_op == max(rates, key=lambda k: (rates[k], -k))
    assert style_graph(graph, res, "sqnr").worst_op == min(res.layers, key=lambda lay: lay.metrics.sqnr_db).op_index
