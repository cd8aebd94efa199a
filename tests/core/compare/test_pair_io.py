"""The pair check compares inputs and outputs (count, shape, kind of value): a pair whose ops pair
by structure but whose inputs differ is not twins. Shapes are read independently with the
`tflite` package."""

from __future__ import annotations

import tflite

from inspector.core.compare.pair_check import PairCheck, check_pair_files
from inspector.core.compare.pair_io import io_mismatches
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path
from tests.helpers.task_fixtures import TaskFixtures

CACHE = REPO / ".fixture-cache"


def _io(path) -> dict[str, list[tuple[int, ...]]]:
    sg = tflite.Model.GetRootAsModel(open(path, "rb").read(), 0).Subgraphs(0)
    return {what: [tuple(sg.Tensors(i).ShapeSignatureAsNumpy().tolist() or sg.Tensors(i).ShapeAsNumpy().tolist()) for i in idx]
            for what, idx in (("input", sg.InputsAsNumpy()), ("output", sg.OutputsAsNumpy()))}  # fmt: skip


def test_other_inputs_or_outputs_are_not_twins(cnn_pair, fixture_path):
    fa = cnn_pair[0]  # the CNN the offset and classifier fixtures vary
    offset = cache_path(CACHE, "offset_int8")
    cls = TaskFixtures(CACHE).models()["cls_int8"]
    for b, what in ((offset, "input"), (cls, "output")):
        a_io, b_io = _io(fa), _io(b)
        assert a_io[what][0][1:] != b_io[what][0][1:]  # they really differ, batch aside
        check = check_pair_files(fa, b)
        want = f"{what} 0 is {[-1, *a_io[what][0][1:]]} float32 in A but {[-1, *b_io[what][0][1:]]} float32 in B"
        assert check.io_mismatches == (want,) and not check.related
        assert check.reasons[-1] == f"inputs or outputs differ: {want}"
        assert check.op_coverage >= 0.5  # the ops alone would have passed as twins
        assert PairCheck.from_json(check.to_json()) == check


def test_twins_and_quantized_io_agree(example_pair, fixture_path):
    assert check_pair_files(*example_pair).io_mismatches == ()
    # int8 inputs and outputs carry real values like the float ones: the same kind
    a, b = load_model(fixture_path("float")), load_model(fixture_path("int8_io"))
    assert b.main.tensors[b.main.inputs[0]].dtype == "int8"
    assert io_mismatches(a.main, b.main) == ()


def test_token_ids_against_floats_and_counts():
    sig = load_model(cache_path(CACHE, "sig_float"))  # two inputs
    off = load_model(cache_path(CACHE, "offset_float"))  # one
    assert io_mismatches(sig.main, off.main)[0] == "A has 2 inputs, B 1"
