"""Reports: the HTML is self-contained, has every section, and shows the JSON's numbers; weight
histograms match an independent numpy histogram; Model Explorer node data; the report CLI gate."""

from __future__ import annotations

import json
import math
from html.parser import HTMLParser

import numpy as np
import pytest

from inspector.core.compare.export import worst_layers
from inspector.core.compare.result import ComparisonResult
from inspector.core.quantmath.quant import dequantize
from inspector.core.review.model_explorer import node_data
from inspector.core.review.report import build_report
from inspector.core.review.report_html import SECTIONS, render_html
from inspector.core.review.svg_plot import PALETTE, Series, line_plot, nice_ticks
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.audit_fixtures import planted


class _Doc(HTMLParser):
    """Collects ids, tags, URL-bearing attributes and numeric cells of an HTML document."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: list[str] = []
        self.urls: list[tuple[str, str, str]] = []
        self.cells: list[tuple[str | None, str, str]] = []  # (row id, data-key, data-value)
        self.rows: list[tuple[str | None, str | None]] = []  # (tr id, tr class)
        self.circles: list[dict] = []
        self._row: str | None = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href", "xlink:href", "data", "action", "poster"):
            if k in a:
                self.urls.append((tag, k, a[k]))
        if tag == "tr":
            self._row = a.get("id")
            self.rows.append((a.get("id"), a.get("class")))
        if "data-value" in a:
            self.cells.append((self._row, a.get("data-key", ""), a["data-value"]))
        if tag == "circle":
            self.circles.append(a)


@pytest.fixture(scope="module")
def example_report(example_pair):
    from inspector.core.compare.comparison import CompareOptions, compare_models

    f, q = example_pair
    comparison = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=4, seed=1), isolated=True))
    report = build_report(str(f), str(q), comparison, worst_n=4)
    return report, render_html(report)


def _parse(html: str) -> _Doc:
    d = _Doc()
    d.feed(html)
    return d


def test_html_self_contained_with_every_section(example_report):
    report, html = example_report
    doc = _parse(html)
    assert {sid for sid, _ in SECTIONS} <= doc.ids
    assert "script" not in doc.tags and "link" not in doc.tags and "iframe" not in doc.tags
    # the only URLs are in-page anchors (or data: URIs); nothing is fetched from a network
    assert all(v.startswith(("#", "data:")) for _, _, v in doc.urls), doc.urls
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html
    # plots are inline SVG: the layer plot plus one histogram per worst layer with weights
    n_hist = sum(1 for lay in report["worst_layers"] if lay["weights"])
    assert n_hist >= 2
    assert doc.tags.count("svg") == 1 + n_hist


def test_html_numbers_match_json(example_report):
    report, html = example_report
    doc = _parse(html)
    for lay in report["worst_layers"]:
        rid = f"worst-op-{lay['op_index']}"
        cells = {k: v for r, k, v in doc.cells if r == rid}
        for key in ("sqnr_db", "mse", "max_abs", "clip_rate", "range_use"):
            assert json.loads(cells[key]) == lay["metrics"][key], (rid, key)
        assert json.loads(cells["op_index"]) == lay["op_index"]
    for sev, n in report["audit"]["counts"].items():
        assert ("count." + sev, str(n)) in {(k, v) for _, k, v in doc.cells}
    finding_rows = [c for _, c in doc.rows if c and c.startswith("sev-")]
    assert len(finding_rows) == len(report["audit"]["findings"])
    # one accumulated-SQNR marker per plotted layer (finite SQNR)
    finite = [lay for lay in report["comparison"]["layers"] if lay["metrics"]["sqnr_db"] is not None]
    assert sum(1 for c in doc.circles if c.get("fill") == PALETTE[0]) == len(finite)
    # the worst layers really are the lowest SQNRs, and each has its op math
    sq = sorted(lay["metrics"]["sqnr_db"] for lay in finite)
    assert [lay["metrics"]["sqnr_db"] for lay in report["worst_layers"]] == sq[:4]
    assert set(report["op_math"]) == {str(lay["op_index"]) for lay in report["worst_layers"]}
    for key in report["op_math"]:
        assert f"opmath-{key}" in doc.ids
    json.dumps(report, allow_nan=False)


def test_weight_histograms_match_numpy(example_report, example_pair):
    report, _ = example_report
    qm = load_model(example_pair[1])
    checked = 0
    for lay in report["worst_layers"]:
        h = lay["weights"]
        if not h:
            continue
        t = qm.main.tensors[h["tensor_index"]]
        deq = dequantize(qm.tensor_data(t), t.quantization).ravel()
        edges = np.asarray(h["edges"])
        assert np.all(np.diff(edges) > 0)
        assert sum(h["quant_counts"]) == deq.size == sum(h["float_counts"])
        ref = np.histogram(deq, bins=edges)[0]
        assert np.abs(ref - np.asarray(h["quant_counts"])).sum() <= max(2, deq.size // 1000)
        assert h["clip_lo"] == pytest.approx(float(np.min(t.quantization.scales) * -128)) or h["per_channel"]
        checked += 1
    assert checked >= 2


def test_model_explorer_node_data(example_report, example_pair):
    report, _ = example_report
    comp = report["comparison"]
    typed = ComparisonResult.from_json(comp)  # the report file's comparison, read back
    nd = node_data(typed, model=load_model(example_pair[1]))
    assert list(nd) == ["main"]
    g = nd["main"]
    want = {}
    for lay in comp["layers"]:
        v = lay["metrics"]["sqnr_db"]
        if v is not None:
            k = str(lay["op_index"])
            want[k] = min(v, want.get(k, math.inf))
    assert {k: r["value"] for k, r in g["results"].items()} == want
    assert [s["stop"] for s in g["gradient"]] == [0, 0.5, 1] and g["gradient"][0]["bgColor"] == "#d73027"
    mse = node_data(typed, "mse")["main"]
    assert mse["gradient"][0]["bgColor"] == "#1a9850"  # low MSE is good: green at the minimum
    iso = node_data(typed, isolated=True)["main"]["results"]
    assert all(r["value"] == next(lay["isolated"]["sqnr_db"] for lay in comp["layers"] if str(lay["op_index"]) == k)
               for k, r in iso.items())  # fmt: skip
    with pytest.raises(ValueError):
        node_data(typed, "accuracy")


def test_single_model_report_audits_it(fixture_path, tmp_path):
    data, info = planted(fixture_path("int8"), ["softmax_output_scale"])
    p = tmp_path / "bad.tflite"
    p.write_bytes(data)
    report = build_report(str(p))
    assert report["models"]["quant"] is None and report["comparison"] is None and report["worst_layers"] == []
    assert [f["rule"] for f in report["audit"]["findings"] if f["severity"] == "error"] == ["fixed-output"]
    doc = _parse(render_html(report))
    assert {sid for sid, _ in SECTIONS} <= doc.ids
    assert worst_layers(None) == []








def test_svg_helpers():
    assert nice_ticks(0, 10) == [0, 2, 4, 6, 8, 10]
    assert nice_ticks(13.2, 47.9)[0] >= 13.2 and nice_ticks(13.2, 47.9)[-1] <= 47.9
    svg = line_plot([Series("a", [0, 1], [None, float("inf")])], title="t", x_label="x", y_label="y")
    assert "no finite values" in svg
    svg = line_plot([Series("a", [0, 1, 2], [1.0, None, 3.0])], title="t", x_label="x", y_label="y")
    assert svg.count("<polyline") == 0 and svg.count("<circle") == 2  # the gap breaks the line
    svg = line_plot([Series("a", [0, 1, 2], [1.0, None, 3.0])], title="t", x_label="x", y_label="y", connect_gaps=True)
    assert svg.count("<polyline") == 1
