"""Closing model A (or B) clears every view that described the pair: the comparison and its
plots, the baseline, the versions of B, the suggestion and its trade-off plot, the op math;
the audit of B no longer uses the comparison's ranges."""

from __future__ import annotations

import dataclasses

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.suggest import SuggestResult, TradeoffPoint
from inspector.core.samples.settings import SampleSettings
from tests.helpers.gui_helpers import open_wait


@pytest.fixture(scope="module")
def comparison(fixture_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    return compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))


def _suggestion(size: int) -> SuggestResult:
    pts = [TradeoffPoint("given", (), size, 30.0), TradeoffPoint("+op 3", (3,), size + 4096, 34.0)]
    return SuggestResult(33.0, None, "keep_float", "int8", True, [{"op": 3, "type": "CONV_2D", "gain_db": 4.0}], Plan(base="int8"), pts)


@pytest.mark.parametrize("slot", ["A", "B"])
def test_closing_a_model_clears_dependent_views(qtbot, window, fixture_path, comparison, slot):
    fp, qp = fixture_path("float"), fixture_path("int8")
    open_wait(qtbot, window, "A", fp)
    open_wait(qtbot, window, "B", qp)
    cc, rq = window.features.compare, window.features.requantize
    cc.set_result(comparison)
    cc.set_baseline(comparison, "before: v0")
    rq._suggested(_suggestion(rq.versions[0].size_bytes), "/nonexistent/suggested.tflite")
    conv = next(op for op in window.controller.subgraph("B").ops if op.type == "CONV_2D")
    window.controller.select_op("B", conv.index)
    panel, plot = window.features.requantize_panel, window.features.compare_features.plot
    # Everything shows something before the close (so the checks below can fail).
    assert panel.versions.table.rowCount() == 1 and panel.suggest.result.text()
    assert len(panel.tradeoff.point_data()[0]) == 2 and not panel.tradeoff.empty.isVisible()
    assert plot.series and not plot.empty.isVisible() and panel.plot.series
    assert window.features.opmath.op_math_panel.math is not None
    assert "comparison" in window.features.review.audit_view.summary.text() or window.features.review.findings is not None

    window.controller.close_model(slot)

    assert cc.result is None and cc.baseline is None
    assert rq.versions == [] and rq.current is None and rq.suggestion is None
    assert panel.versions.table.rowCount() == 0 and panel.versions.deltas.rowCount() == 0
    assert panel.suggest.result.text() == "" and not panel.suggest.apply_button.isEnabled()
    assert len(panel.tradeoff.point_data()[0]) == 0 and len(panel.tradeoff.point_data("versions")[0]) == 0
    assert panel.tradeoff.empty.isVisible() and not panel.tradeoff.best.getData()[0].size
    assert plot.series == {} and plot.empty.isVisible() and panel.plot.series == {}
    assert window.features.compare_features.sample_plot.series == {}
    assert "output" not in window.features.compare_features.summary.text
    assert window.features.opmath.op_math_panel.math is None
    assert panel.notes.toPlainText() == ""
    if slot == "B":
        assert window.features.review.findings is None
    else:  # B's audit stays, but no longer with the ranges of the dropped comparison
        assert "run a comparison" in window.features.review.audit_view.summary.text()


def test_summary_strip_does_not_move_the_layout(qtbot, window, fixture_path, comparison):
    """The output summary strip has its place from the start: a result arriving (or going)
    moves nothing under the mouse."""
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    strip = window.features.compare_features.summary
    qtbot.waitUntil(strip.isVisible)
    before = (window.main_splitter.geometry(), window.tabs.geometry(), strip.geometry())
    # a result from real samples: a random-inputs result also raises its (dismissable) notice banner
    window.features.compare.set_result(dataclasses.replace(comparison, samples_are_random=False))
    qtbot.wait(20)
    assert "output" in strip.text
    assert (window.main_splitter.geometry(), window.tabs.geometry(), strip.geometry()) == before
    window.features.compare.set_result(None)
    qtbot.wait(20)
    assert (window.main_splitter.geometry(), window.tabs.geometry(), strip.geometry()) == before


def test_results_arriving_after_the_close_are_dropped(qtbot, window, fixture_path):
    """A requantize or suggest run that finishes after its pair was closed adds nothing."""
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", fixture_path("int8"))
    rq = window.features.requantize
    v0 = rq.versions[0]
    window.controller.close_model("A")
    rq._suggested(_suggestion(1000), "/nonexistent/suggested.tflite")
    assert rq.suggestion is None and window.features.requantize_panel.suggest.result.text() == ""

    class Run:  # what the worker would have delivered
        baseline = None
        path = "/nonexistent/v1.tflite"

    rq._requantized(Run(), Plan(base="int8"), v0, 1)
    assert rq.versions == [] and window.features.requantize_panel.versions.table.rowCount() == 0
