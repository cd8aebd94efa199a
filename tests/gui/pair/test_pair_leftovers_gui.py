"""More state that must not carry over to another pair (issue 19 §1): Suggest's red failure
banner, the example's inputs, the Requantize editor's status and calibration text; and the op
counterpart shown on a float16 twin, which comes from the core pairing (symmetric)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.compare.pairing import pair_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from inspector.paths import example_inputs
from tests.helpers.fp16_fixtures import Fp16Fixtures
from tests.helpers.gui_helpers import click_enabled, open_pair_checked
from tests.helpers.paths import REPO

CACHE = REPO / ".fixture-cache"
RUN_MS = 120_000


def test_a_suggest_failure_goes_with_its_pair(qtbot, window, example_pair, offset_pair):
    open_pair_checked(qtbot, window, *(str(p) for p in example_pair))
    rq, ed = window.features.requantize, window.features.requantize_panel.editor
    rq.suggest(None, None, "surgical")  # no target and no budget: Suggest fails at once
    msg = "Give Suggest a target output SQNR or a maximum number of edits."
    assert window.banner.isVisible() and window.banner.text == msg and ed.status.text() == msg

    open_pair_checked(qtbot, window, *offset_pair)
    assert not window.banner.isVisible()  # the failure was the old pair's
    assert ed.status.text() == ""


def test_the_examples_inputs_stay_with_the_example(qtbot, window, example_pair, offset_pair):
    open_pair_checked(qtbot, window, *(str(p) for p in example_pair))
    assert window.state.samples.source == str(example_inputs())
    ed, panel = window.features.requantize_panel.editor, window.features.compare_features.inputs
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS):  # run on the example's own inputs
        click_enabled(qtbot, panel.run_button)
    assert window.state.run_options.samples.source == str(example_inputs())
    assert example_inputs().name in ed.calibration.text()

    open_pair_checked(qtbot, window, *offset_pair)
    s = window.state.samples
    assert s == SampleSettings() and panel.source.currentData() == "random"
    assert panel.status.text() == f"No samples chosen for this pair yet: starting from its default, {s.describe()}."
    assert example_inputs().name not in ed.calibration.text()  # calibration names the new pair's samples
    assert s.describe() in ed.calibration.text()


def _dequantize_ops(path: Path) -> list[int]:
    return [op.index for op in Model(str(path)).main.ops if op.type == "DEQUANTIZE"]


def test_float16_counterparts_are_the_core_pairings_both_ways(qtbot, window):
    m = Fp16Fixtures(CACHE).models()
    fa, fb = m["fp16_float"], m["fp16_twin"]
    open_pair_checked(qtbot, window, str(fa), str(fb))
    c = window.controller
    pairing = pair_models(Model(str(fa)), Model(str(fb)))  # core, independent of the controller
    deq = _dequantize_ops(fb)
    assert deq  # float16 constants behind DEQUANTIZE
    for i in deq:
        assert c.counterpart_op("B", i) is None  # a float16 constant's DEQUANTIZE has no op in A
    n_a, n_b = len(c.models["A"].main.ops), len(c.models["B"].main.ops)
    for i in range(n_b):
        assert c.counterpart_op("B", i) == pairing.float_op_for(i)
    for i in range(n_a):
        j = c.counterpart_op("A", i)
        assert j == pairing.quant_op_for(i)
        assert j is None or c.counterpart_op("B", j) == i  # symmetric
