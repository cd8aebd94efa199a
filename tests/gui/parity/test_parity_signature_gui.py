"""The GUI's runtime parity runs on the chosen signature (issue 26 §11): the options the Runtime
parity tab builds carry the state's signature (its op indices are the comparison's)."""

from __future__ import annotations

from types import SimpleNamespace

from inspector.core.state.app_state import AppState
from inspector.core.tflite.model import load_model
from inspector.gui.parity.controller import ParityController
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


def test_parity_tab_runs_the_chosen_signature(qtbot, sig_window):
    from tests.helpers.gui_helpers import choose_signature, click_enabled, use_random_samples

    win = sig_window
    use_random_samples(win)
    choose_signature(qtbot, win, "prefill")
    view = win.features.parity.view
    with qtbot.waitSignal(win.features.parity.controller.result_changed, timeout=60_000,
                          check_params_cb=lambda r: r is not None) as blocker:  # fmt: skip
        click_enabled(qtbot, view.run_button)
    r = blocker.args[0]
    sub = load_model(cache_path(CACHE, "sig_int8")).for_signature("prefill").main
    assert r.signature == "prefill" and r.subgraph == sub.index == 1
    assert [lay.op_type for lay in r.layers] == [sub.ops[lay.op_index].type for lay in r.layers]
    qtbot.waitUntil(lambda: "signature 'prefill'" in view.run_row.status.text(), timeout=5000)
    choose_signature(qtbot, win, "decode")  # another subgraph's ops: the result is dropped
    assert win.features.parity.controller.result is None
