"""The GUI's runtime parity runs on the chosen signature (issue 26 §11): the options the Runtime
parity tab builds carry the state's signature (its op indices are the comparison's)."""

from __future__ import annotations

from types import SimpleNamespace

from inspector.core.state.app_state import AppState
from inspector.core.tflite.model import load_model
from inspector.gui.parity_controller import ParityController
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path

CACHE = REPO / ".fixture-cache"


def test_gui_parity_options_use_the_chosen_signature():
    s = AppState()
    s.set_model("A", load_model(cache_path(CACHE, "sig_float")))
    s.set_model("B", load_model(cache_path(CACHE, "sig_int8")))
    s.set_signature("prefill")
    fake = SimpleNamespace(state=s)
    opts = ParityController.parity_options(SimpleNamespace(controller=fake), ("reference", "optimized"), (1, 1))
    assert opts.signature == "prefill" and opts.samples == s.samples
