"""The Qt-free application state: events, pairing, stale results, and the session as its serialized form."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import AppState, Event, Selection, same_file
from inspector.core.state.session import load_session, save_session, session_from_state
from inspector.core.tflite.model import load_model

ROOT = Path(__file__).resolve().parents[3]


def test_event_calls_subscribers_in_order():
    e, seen = Event(), []
    e.connect(lambda x: seen.append(("a", x)))
    f = lambda x: seen.append(("b", x))  # noqa: E731
    e.connect(f)
    e.emit(1)
    e.disconnect(f)
    e.emit(2)
    assert seen == [("a", 1), ("b", 1), ("a", 2)]


def test_models_selection_results_and_session(fixture_path, tmp_path):
    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    s = AppState()
    log = []
    s.slot_changed.connect(lambda slot: log.append(("models", slot)))
    s.selection_changed.connect(lambda sel: log.append(("selection", sel.origin)))
    s.comparison_changed.connect(lambda r: log.append(("comparison", r is not None)))
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    assert s.pairing is not None and s.paths() == (fp, qp)
    opts = CompareOptions(samples=SampleSettings(count=2, seed=3), runtime="reference")
    s.set_options(opts)
    result = compare_models(fp, qp, opts)
    s.set_comparison(result, opts)
    b_op = result.layers[2].op_index
    assert s.select(Selection("B", result.layers[2].float_op_index, b_op, None, 7), channel=1)
    assert not s.select(s.selection, 1)  # unchanged: no event
    assert s.current_comparison() is result

    data = session_from_state(s)
    assert data["selection"]["op_b"] == b_op and data["selection"]["channel"] == 1
    assert data["selection"]["tensor_name_b"] == s.models["B"].main.tensors[7].name
    assert CompareOptions.from_json(data["inputs"]) == opts
    assert data["results"]["compare"]["layers"] == [lay.to_json() for lay in result.layers]
    saved = save_session(tmp_path / "s.tqi.json", data)
    assert load_session(tmp_path / "s.tqi.json")["inputs"] == saved["inputs"] == opts.to_json()

    # another B: the comparison of the old pair is dropped before slot_changed, selection reset
    log.clear()
    s.set_model("B", load_model(fixture_path("int8_no_signature")))
    assert s.comparison is None and s.current_comparison() is None and s.selection == Selection("B")
    assert log == [("comparison", False), ("models", "B"), ("selection", "B")]
    assert session_from_state(s)["results"] == {}


def test_same_file_and_no_window_lookups(tmp_path):
    p = tmp_path / "m.tflite"
    p.write_bytes(b"x")
    assert same_file(str(p), str(tmp_path / "." / "m.tflite")) and not same_file(str(p), None)
    hits = subprocess.run(["grep", "-rnE", r"getattr\((self\.)?window|def _?same_file", "inspector"],
                          cwd=ROOT, capture_output=True, text=True).stdout.splitlines()  # fmt: skip
    assert [h.split(":")[0] for h in hits] == ["inspector/core/state/app_state.py"], hits


def test_swap_models_repairs_once_and_drops_the_old_comparison(fixture_path):
    from inspector.core.compare.pairing import pair_models

    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    s = AppState()
    s.set_model("A", load_model(qp))  # the wrong way round
    s.set_model("B", load_model(fp))
    opts = CompareOptions(samples=SampleSettings(count=1, seed=0), runtime="reference")
    s.set_comparison(compare_models(qp, fp, opts), opts)
    log = []
    s.slot_changed.connect(lambda slot: log.append(("models", slot)))
    s.comparison_changed.connect(lambda r: log.append(("comparison", r is not None)))
    s.swap_models()
    assert s.paths() == (fp, qp)
    assert log == [("comparison", False), ("models", "A"), ("models", "B")]
    want = pair_models(load_model(fp), load_model(qp))
    assert [(p.float_op, p.quant_op) for p in s.pairing.ops] == [(p.float_op, p.quant_op) for p in want.ops]
    assert s.selection == Selection("B")


def test_one_option_by_name_through_one_setter():
    s = AppState()
    log = []
    s.options_changed.connect(log.append)
    s.set_option("seed", 3)  # a SampleSettings field
    s.set_option("runtime", "reference")  # a CompareOptions field
    assert s.options.samples.seed == 3 and s.option("seed") == 3
    assert s.options.runtime == "reference" and s.options.samples.count == SampleSettings().count
    assert len(log) == 2 and log[-1] is s.options
    s.set_option("seed", 3)  # unchanged: no event (a bound widget shown the value again)
    assert len(log) == 2
    with pytest.raises(KeyError):
        s.set_option("samples", None)
