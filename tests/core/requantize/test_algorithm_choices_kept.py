"""The calibration algorithms per op type (`requantize.choices.algorithms_for`, the requantize
panel's choices) come from litert-quantizer, whose import costs 0.5-2 s at every start of the app:
its answers are kept in the cache folder and read back without importing it, the same answers for
every builtin op type; a file of another litert-quantizer (its stamp) is asked again."""

from __future__ import annotations

import json

import pytest
import tflite

from inspector.core.requantize import choices
from inspector.core.requantize.plan import ALGORITHMS


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("TFLITE_INSPECTOR_NO_DISK_CACHE", raising=False)
    choices.registered_ops.cache_clear()
    choices.algorithms_for.cache_clear()
    yield tmp_path / "tflite-inspector" / "litert-quantizer-ops.json"
    choices.registered_ops.cache_clear()
    choices.algorithms_for.cache_clear()


def test_the_kept_answers_are_litert_quantizers_and_are_read_back(cache):
    from litert_quantizer import algorithm_manager

    registered = choices.registered_ops()
    assert cache.exists()
    ops = [n for n in dir(tflite.BuiltinOperator) if n.isupper()]
    for key in ALGORITHMS.values():  # the same answer as asking litert-quantizer, op type by op type
        assert {op for op in ops if algorithm_manager.is_op_registered(key, op)} == {op for op in ops if op in registered[key]}
    assert choices.algorithms_for("CONV_2D") == ("min_max", "mse", "octav")

    kept = json.loads(cache.read_text())
    kept["ops"][ALGORITHMS["mse"]] = ["CONV_2D", "ADD"]  # what the file says is what a new process answers
    cache.write_text(json.dumps(kept))
    choices.registered_ops.cache_clear()
    choices.algorithms_for.cache_clear()
    assert "mse" in choices.algorithms_for("ADD")

    kept["stamp"][1] += 1  # another litert-quantizer installed: asked again, the file replaced
    cache.write_text(json.dumps(kept))
    choices.registered_ops.cache_clear()
    choices.algorithms_for.cache_clear()
    assert "mse" not in choices.algorithms_for("ADD")
    assert json.loads(cache.read_text())["ops"][ALGORITHMS["mse"]] == sorted(registered[ALGORITHMS["mse"]])
