"""Report readability (issue 14): labelled worst-layer headers with units, numbers that do not
wrap, the isolated column only when isolated error ran, near-exact SQNRs capped as in the GUI,
and the banners for random inputs and the pair check."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.review.report import build_report
from inspector.core.review.report_html import render_html, worst_columns
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats.metric_table import spec


@pytest.fixture(scope="module")
def reports(example_pair):
    f, q = (str(p) for p in example_pair)
    out = {}
    three = SampleSettings(count=3)
    for name, opts in (("isolated", CompareOptions(samples=three, isolated=True)), ("plain", CompareOptions(samples=three, isolated=False))):
        result = compare_models(f, q, opts)
        if name == "isolated":  # an op equal up to float rounding (as QuantizationDebugger can report)
            result = _with_isolated_sqnr(result, "MAX_POOL_2D", 151.7)
        out[name] = (result.to_json(), render_html(build_report(f, q, result, worst_n=5)))
    return out


def _with_isolated_sqnr(result, op_type: str, db: float):
    """`result` with the isolated SQNR of the first `op_type` layer set to `db`: the float32
    statistics report such layers as exact (inf), the float64 definition as ~150 dB."""
    layers = list(result.layers)
    k = next(i for i, lay in enumerate(layers) if lay.op_type == op_type and lay.isolated is not None)
    layers[k] = dataclasses.replace(layers[k], isolated=dataclasses.replace(layers[k].isolated, sqnr_db=db))
    return dataclasses.replace(result, layers=tuple(layers) if isinstance(result.layers, tuple) else layers)


def _worst_section(html: str) -> str:
    return html.split('<section id="worst-layers">')[1].split("</section>")[0]


def test_worst_headers_are_labels_with_units(reports):
    _, html = reports["plain"]
    heads = re.findall(r"<th[^>]*>([^<]*)</th>", _worst_section(html).split("</tr>")[0])
    assert heads[3:] == [spec(k).header for k in worst_columns()]
    assert not any("_" in h for h in heads)  # no raw JSON keys such as rmse_over_scale
    assert "RMSE / scale (steps)" in heads and "SQNR (dB)" in heads


def test_numbers_do_not_wrap(reports):
    _, html = reports["plain"]
    css = re.search(r"td\.num\{([^}]*)\}", html).group(1)
    assert "white-space:nowrap" in css


def test_isolated_column_only_when_isolated_ran(reports):
    _, plain = reports["plain"]
    _, iso = reports["isolated"]
    assert "isolated SQNR" not in _worst_section(plain) and 'data-key="isolated.sqnr_db"' not in plain
    assert "isolated SQNR (dB)" in _worst_section(iso)


def test_near_exact_sqnr_is_capped_like_the_gui(reports):
    """As the GUI's layer-error plot (issue 19 §2): ∞ (zero error: JSON null with mse 0) and
    SQNRs >= 100 dB sit on one line 10 dB above the best other SQNR, and that line's tick reads
    "∞ / ≥ 100", not a dB number; integer shape ops are not drawn."""
    comparison, html = reports["isolated"]
    def shape_only(lay):
        return lay["dtype"].startswith(("int", "uint", "bool")) and not lay["scale"]

    drawn = [lay[k] for lay in comparison["layers"] if not shape_only(lay) for k in ("metrics", "isolated") if lay.get(k)]
    high = [m for m in drawn if m["sqnr_db"] is None and m["mse"] == 0 or (m["sqnr_db"] or 0) >= 100]
    assert 151.7 in [m["sqnr_db"] for m in high] and len(high) >= 2  # MAX_POOL at 151.7, RESHAPE fed B's input: ∞
    finite = [m["sqnr_db"] for m in drawn if m["sqnr_db"] is not None and m["sqnr_db"] < 100]
    top = 10 * math.ceil((max(finite) + 10) / 10)
    svg = html.split('<section id="layer-error">')[1].split("</svg>")[0]
    ticks = re.findall(r'<text x="[0-9.]+" y="([0-9.]+)" text-anchor="end">([^<]*)</text>', svg)
    numbers = [float(t) for _, t in ticks if re.fullmatch(r"[-0-9.e]+", t)]
    assert numbers and max(numbers) < top  # no dB number on the stand-in line
    assert [t for _, t in ticks if not re.fullmatch(r"[-0-9.e]+", t)] == ["∞ / ≥ 100"]
    assert f"{len(high)} value(s) of ∞ (equal tensors) or ≥ 100 dB" in html
    # every capped value is drawn at the tick's height: as many markers there as capped values
    y_line = float(next(y for y, t in ticks if t == "∞ / ≥ 100")) - 4
    at_line = re.findall(rf'<circle cx="[0-9.]+" cy="{y_line:.1f}" r="2.6"', svg)
    assert len(at_line) == len(high)


def test_random_inputs_and_pair_banners(reports, example_pair):
    comparison, html = reports["plain"]
    assert comparison["samples_are_random"] is True and 'id="random-inputs"' in html
    assert 'id="pair-check"' in html and "Pair check: twins" in html
    f, q = (str(p) for p in example_pair)
    npz = str(example_pair[0].parent / "example_inputs.npz")
    real = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2, source=npz)))
    assert real.to_json()["samples_are_random"] is False
    assert 'id="random-inputs"' not in render_html(build_report(f, q, real))


def test_op_axis_ticks_are_whole_numbers(example_pair):
    """Op indices are whole numbers: a 4-layer plot had ticks at 1.5, 2.5 and 3.5."""
    f, q = (str(p) for p in example_pair)
    report = build_report(f, q, compare_models(f, q, CompareOptions(samples=SampleSettings(count=2))), worst_n=2)
    report["comparison"]["layers"] = report["comparison"]["layers"][:4]  # ops 1..4
    svg = render_html(report).split('<section id="layer-error">')[1].split("</svg>")[0]
    x_ticks = re.findall(r'text-anchor="middle">([-0-9.e]+)</text>', svg)
    assert x_ticks and all(float(t).is_integer() for t in x_ticks), x_ticks
