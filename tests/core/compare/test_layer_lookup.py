"""`layer_for_op` / `layer_position` of a comparison and of a runtime-parity result, against a
brute-force scan of `layers`, on a real pair whose SPLIT op has two layers (one per output) and
whose QUANTIZE/DEQUANTIZE ops have none: the op's FIRST layer, None for an op without a layer.
The index is not a field: the fields, pickling and JSON are those of the result."""

from __future__ import annotations

import json
import pickle
from dataclasses import fields, replace

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.parity_result import ParityOptions
from inspector.core.compare.runtime_parity import compare_runtimes
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO
from tests.helpers.split_fixtures import split_models


@pytest.fixture(scope="module")
def split_pair():
    return split_models(REPO / ".fixture-cache")


def _scan(layers, op):
    for k, layer in enumerate(layers):
        if layer.op_index == op:
            return k
    return None


def _check(result, n_ops: int) -> None:
    for op in [*range(n_ops), n_ops + 5, -1, None]:
        k = _scan(result.layers, op)
        assert result.layer_position(op) == k, op
        assert result.layer_for_op(op) is (None if k is None else result.layers[k]), op


def test_layer_for_op_is_the_first_layer_of_the_op(split_pair):
    f, q = split_pair["split_float"], split_pair["split_int8"]
    qm = load_model(q)
    r = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=2)))
    split_op = next(op.index for op in qm.main.ops if op.type == "SPLIT")
    twins = [k for k, lay in enumerate(r.layers) if lay.op_index == split_op]
    assert len(twins) == 2 and len(r.layers) >= 6  # one layer per output of the SPLIT
    assert r.layer_position(split_op) == twins[0] and r.layer_for_op(split_op) is r.layers[twins[0]]
    assert r.layer_for_op(split_op).tensor_name != r.layers[twins[1]].tensor_name
    without = [op.index for op in qm.main.ops if _scan(r.layers, op.index) is None]
    assert {qm.main.ops[i].type for i in without} == {"QUANTIZE", "DEQUANTIZE"}
    assert all(r.layer_for_op(i) is None for i in without)
    _check(r, len(qm.main.ops))

    # The index is built on use, not a field: the fields, JSON and pickling are the result's.
    assert [x.name for x in fields(r)] == [x.name for x in fields(replace(r))] and not any("op" in x.name for x in fields(r))
    text = json.dumps(r.to_json(), sort_keys=True)
    assert json.dumps(replace(r).to_json(), sort_keys=True) == text
    back = pickle.loads(pickle.dumps(r))
    assert json.dumps(back.to_json(), sort_keys=True) == text and back.layer_for_op(split_op) == r.layers[twins[0]]
    shifted = replace(r, layers=r.layers[twins[1]:])  # a new result indexes its own layers
    assert shifted.layer_for_op(split_op) is shifted.layers[0] and shifted.layer_position(split_op) == 0


def test_parity_layer_for_op_matches_a_scan(split_pair):
    q = split_pair["split_int8"]
    parity = compare_runtimes(str(q), ParityOptions(samples=SampleSettings(count=2)))
    assert len(parity.layers) >= 6
    _check(parity, len(load_model(q).main.ops))
