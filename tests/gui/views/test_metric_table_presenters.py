"""The CLI table, the HTML report and the GUI layer plot take a metric's label, unit, format and
presence from the one metric table (issue 27 §4): a row changed in the table (here by monkeypatch)
shows in all three, and nothing else has to change."""

from __future__ import annotations

import dataclasses
import re

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.export import text_table
from inspector.core.review.report import build_report
from inspector.core.review.report_html import render_html
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats import metric_table
from inspector.gui.app import make_app
from inspector.gui.views.layer_error_plot import LayerErrorPlot


@pytest.fixture(scope="module")
def compared(fixture_path):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    result = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), isolated=False))
    return result, build_report(f, q, result, worst_n=3)


def _patched(monkeypatch, key: str, **changes) -> None:
    table = tuple(dataclasses.replace(m, **changes) if m.key == key else m for m in metric_table.METRIC_TABLE)
    monkeypatch.setattr(metric_table, "METRIC_TABLE", table)


def _plot(qtbot) -> LayerErrorPlot:
    make_app()
    w = LayerErrorPlot()
    qtbot.addWidget(w)
    return w


def _cli_head(table: str) -> str:
    return next(line for line in table.splitlines() if line.startswith("  op type"))


def _report_heads(html: str) -> list[str]:
    worst = html.split('<section id="worst-layers">')[1].split("</section>")[0]
    return re.findall(r"<th[^>]*>([^<]*)</th>", worst.split("</tr>")[0])


def _combo_texts(plot: LayerErrorPlot) -> dict[str, str]:
    c = plot.metric_combo
    return {c.itemData(i): c.itemText(i) for i in range(c.count())}


def test_labels_come_from_the_table(compared, qtbot):
    result, report = compared
    assert "RMSE/S" in _cli_head(text_table(result))  # the CLI table's header
    assert "RMSE / scale (steps)" in _report_heads(render_html(report))
    assert _combo_texts(_plot(qtbot))["rmse_over_scale"] == "RMSE / scale"


def test_a_changed_row_shows_in_the_cli_table_the_report_and_the_plot(compared, qtbot, monkeypatch):
    result, report = compared
    _patched(monkeypatch, "rmse_over_scale", label="own rounding error", unit="LSB",
             column=metric_table.Column("own LSB", 8, ".3f"))
    table = text_table(result)
    head = _cli_head(table)
    assert "own LSB" in head and "RMSE/S" not in head
    conv = next(lay for lay in result.layers if lay.op_type == "CONV_2D" and lay.metrics.rmse_over_scale is not None)
    row = next(line for line in table.splitlines() if line.startswith(f"{conv.op_index:>4} CONV_2D"))
    assert f"{conv.metrics.rmse_over_scale:.3f}" in row  # the column's format too
    heads = _report_heads(render_html(report))
    assert "own rounding error (LSB)" in heads and "RMSE / scale (steps)" not in heads
    plot = _plot(qtbot)
    assert _combo_texts(plot)["rmse_over_scale"] == "own rounding error"
    plot.set_result(result)
    plot.metric_combo.setCurrentIndex(plot.metric_combo.findData("rmse_over_scale"))
    assert plot.plot.getPlotItem().getAxis("left").labelText == "own rounding error (LSB)"


def test_where_a_metric_is_shown_is_the_tables_choice(compared, qtbot, monkeypatch):
    """mean error: not offered by the plot, a report column; cosine: the reverse. Flip both."""
    result, report = compared
    plot = _plot(qtbot)
    assert "mean_error" not in _combo_texts(plot) and "cosine" in _combo_texts(plot)
    assert "cosine similarity" not in _report_heads(render_html(report))
    _patched(monkeypatch, "mean_error", plot=True, column=metric_table.Column("bias", 9, ".2e"))
    _patched(monkeypatch, "cosine", report=False, plot=False, column=None)
    texts = _combo_texts(_plot(qtbot))
    assert texts.get("mean_error") == "mean error / bias" and "cosine" not in texts
    head = _cli_head(text_table(result))
    assert "bias" in head and " cos " not in f"{head} "
    _patched(monkeypatch, "cosine", report=True)
    assert "cosine similarity" in _report_heads(render_html(report))


def test_percent_metrics_read_in_percent_on_the_plot_axis(compared, qtbot):
    """The table's percent-ness reaches the plot: "clip rate (%)" with ticks in % (the drawn values
    stay shares, as the tooltips and the ring use them); before, the axis read "clip rate (x0.001)"."""
    result, _ = compared
    plot = _plot(qtbot)
    plot.set_result(result)
    left = plot.plot.getPlotItem().getAxis("left")
    plot.set_metric("clip_rate")
    assert left.labelText == "clip rate (%)" and left.scale == 100.0
    plot.set_metric("sqnr_db")
    assert left.labelText == "SQNR (dB)" and left.scale == 1.0
