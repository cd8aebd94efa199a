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
from inspector.core.review.report_html import WORST_LABELS, render_html
from inspector.core.samples.settings import SampleSettings


@pytest.fixture(scope="module")
def reports(example_pair):
    f, q = (str(p) for p in example_pair)
    out = {}
    three = SampleSettings(count=3)
    for name, opts in (("isolated", CompareOptions(samples=three, isolated=True)), ("plain", CompareOptions(samples=three))):
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
    assert heads[3:] == list(WORST_LABELS.values())
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
    comparison, html = reports["isolated"]
    values = [lay[k]["sqnr_db"] for lay in comparison["layers"] for k in ("metrics", "isolated")
              if lay.get(k) and lay[k]["sqnr_db"] is not None]  # fmt: skip
    high = [v for v in values if v >= 100]
    assert high == [151.7]
    top = 10 * math.ceil((max(v for v in values if v < 100) + 10) / 10)
    svg = html.split('<section id="layer-error">')[1].split("</svg>")[0]
    y_ticks = [float(t) for t in re.findall(r'text-anchor="end">([-0-9.e]+)</text>', svg)]
    assert y_ticks and max(y_ticks) <= top + 10 and max(y_ticks) < 100
    assert f"{len(high)} value(s) of ≥ 100 dB" in html and f"drawn at {top:.0f} dB" in html


def test_random_inputs_and_pair_banners(reports, example_pair):
    comparison, html = reports["plain"]
    assert comparison["samples_are_random"] is True and 'id="random-inputs"' in html
    assert 'id="pair-check"' in html and "Pair check: twins" in html
    f, q = (str(p) for p in example_pair)
    npz = str(example_pair[0].parent / "example_inputs.npz")
    real = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2, source=npz)))
    assert real.to_json()["samples_are_random"] is False
    assert 'id="random-inputs"' not in render_html(build_report(f, q, real))
