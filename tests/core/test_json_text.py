"""`writing.dumps_indented` writes the same characters as `json.dumps(indent=2, allow_nan=False)`
(what `writing.to_json_text` wrote before), on made-up edge cases and a real comparison's JSON."""

from __future__ import annotations

import enum
import json
import math

import numpy as np
import pytest

from inspector.core.writing import _default, dumps_indented, to_json_text


class Color(enum.IntEnum):
    RED = 3


CASES = [
    {},
    [],
    {"a": [], "b": {}, "c": [[]], "d": [{}]},
    [1, 2.5, -0.0, 1e-300, 1.7976931348623157e308, 10**30, True, False, None],  # bools are not numbers
    [0.1, None, 3, None],
    {"é": "ünïcode \u2028 \x00 \"quoted\" \\", 1: "int key", 2.5: "float key", False: "f", None: "n"},
    {"nested": [[1.5, [2, {"x": [3.25, None]}]], ("tuple", 1)]},
    [np.float32(0.1), np.float64(2.0), np.int64(7), np.arange(3), np.array([0.5, 1.5])],  # through `default`
    [Color.RED, {"k": Color.RED}],
    "top-level string",
    7.25,
]


@pytest.mark.parametrize("obj", CASES)
def test_same_text_as_json_dumps(obj):
    assert dumps_indented(obj, _default) == json.dumps(obj, indent=2, allow_nan=False, default=_default)


@pytest.mark.parametrize("bad", [[1.0, math.inf], [math.nan], {"x": -math.inf}, {math.inf: 1}])
def test_out_of_range_floats_are_refused_as_json_refuses_them(bad):
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        dumps_indented(bad)
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        json.dumps(bad, indent=2, allow_nan=False)


def test_unknown_objects_and_keys_are_refused():
    with pytest.raises(TypeError):
        dumps_indented([object()])
    with pytest.raises(TypeError, match="keys must be"):
        dumps_indented({(1, 2): 3})


def test_a_comparison_result_is_written_as_before(example_pair):
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.samples.settings import SampleSettings

    res = compare_models(str(example_pair[0]), str(example_pair[1]), CompareOptions(samples=SampleSettings(count=2)))
    obj = res.to_json()
    text = to_json_text(obj)
    assert text == json.dumps(obj, indent=2, allow_nan=False, default=_default)
    assert json.loads(text)["samples"] == 2 and len(json.loads(text)["layers"]) == len(res.layers) > 5
