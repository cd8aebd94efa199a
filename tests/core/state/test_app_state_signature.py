"""AppState and the chosen signature (Qt-free): both models are seen through it (`main` is the
signature's subgraph, checked against the file's own signature table), pairing and selection
follow, a comparison of another signature is not current, a key a model lacks falls back to
subgraph 0 with a note, and sessions carry the key."""

from __future__ import annotations

import dataclasses

from inspector.core.compare.result import ComparisonResult
from inspector.core.state.app_state import AppState, Selection
from inspector.core.state.session import session_from_state
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path

CACHE = REPO / ".fixture-cache"


def _state():
    f, q = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    s = AppState()
    s.set_model("A", load_model(f))
    s.set_model("B", load_model(q))
    return s, f, q


def test_signature_views_both_models():
    s, f, q = _state()
    events = []
    s.signature_changed.connect(events.append)
    assert s.signature_keys() == ("decode", "prefill")
    s.select(Selection("B", None, 3, None, None))
    s.set_signature("prefill")
    assert events == ["prefill"] and s.options.signature == "prefill"
    want = {sig.key: sig.subgraph for sig in load_model(q).signatures}
    for slot, path in (("A", f), ("B", q)):
        m = s.models[slot]
        assert m.main.index == want["prefill"] == 1 and m.signature_key == "prefill"
        assert s.base_models[slot].main.index == 0
        assert m.path == str(path)
    assert s.selection.op_b is None  # indices of another subgraph: cleared
    assert s.pairing is not None
    assert session_from_state(s)["inputs"]["signature"] == "prefill"


def test_comparison_of_another_signature_is_not_current():
    s, f, q = _state()
    r = ComparisonResult(float_path=str(f), quant_path=str(q), runtime="optimized", kernels="", samples=1,
                         layers=(), unmatched=(), outputs=(), isolated=False, seed=0, inputs="", signature="decode")  # fmt: skip
    s.set_signature("decode")
    s.set_comparison(r)
    assert s.current_comparison() is r
    s.set_signature("prefill")
    assert s.comparison is None  # dropped: its layers are decode's ops
    s.set_comparison(dataclasses.replace(r, signature="decode"))
    assert s.current_comparison() is None


def test_unknown_key_falls_back_to_subgraph_0():
    s, f, q = _state()
    s.set_signature("prefill")
    s.set_model("B", load_model(cache_path(CACHE, "dyn_int8")))  # a model without 'prefill'
    assert s.options.signature is None and "prefill" in s.signature_note
    assert s.models["A"].main.index == 0
    s.set_signature("nope")
    assert s.options.signature is None and "'nope'" in s.signature_note
