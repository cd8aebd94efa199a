"""The HTML report read as a new user (issue 19, rendered in headless Chromium): agreement that
leaves tied samples out says over how many, tied predictions are marked, accuracies carry their
unit, several outputs are each shown (the cards were output 0's alone), a signature's comparison
is named above its plot, and causes judged without isolated error say so.

Independent references: argmax ties counted in numpy on LiteRT's own outputs of the bundled
inputs; the per-output figures in the JSON the report was built from.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.review.report import build_report
from inspector.core.review.report_html import render_html
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.paths import example_inputs
from tests.helpers.output_kind_fixtures import OutputKindFixtures
from tests.helpers.paths import REPO


def _section(html: str, sid: str) -> str:
    return html.split(f'<section id="{sid}">')[1].split("</section>")[0]


@pytest.fixture(scope="module")
def example(example_pair):
    f, q = (str(p) for p in example_pair)
    result = compare_models(f, q, CompareOptions(samples=SampleSettings(count=ALL, source=str(example_inputs()))))
    return f, q, result, render_html(build_report(f, q, result))


def _ties(path: str, images: np.ndarray) -> list[bool]:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=path, experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    tied = []
    for x in images:
        it.set_tensor(inp["index"], x[None].astype(np.float32))
        it.invoke()
        v = it.get_tensor(out["index"]).ravel()
        tied.append(int(np.count_nonzero(v == v.max())) > 1)
    return tied


def test_agreement_says_how_many_samples_it_counts(example, tmp_path):
    f, q, _, html = example
    data = np.load(example_inputs())
    images = data[next(k for k in data.files if k != "labels")]
    ft, qt = _ties(f, images), _ties(q, images)
    assert any(qt)  # the case: the int8 softmax saturates, several classes read 255/256
    counted = len(ft) - sum(ft)  # only ties in A are left out; ties in B alone are lost decisions
    lost = sum(b and not a for a, b in zip(ft, qt, strict=True))
    parts = ([f"{counted} of {len(ft)}"] if counted < len(ft) else []) + ([f"{lost} tied in B: lost"] if lost else [])
    task = _section(html, "task")
    top1 = re.search(r'data-key="task.top-1 agreement">.*?<b>([^<]*)</b>', task).group(1)
    assert top1.endswith(f"({'; '.join(parts)})"), top1
    # tied predictions are marked as such in the worst samples, and the flipped column is named:
    # the tied samples and a few others, so that every one is in the table
    tied = [a or b for a, b in zip(ft, qt, strict=True)]
    pick = [i for i, t in enumerate(tied) if t] + [i for i, t in enumerate(tied) if not t][:4]
    npz = tmp_path / "some.npz"
    np.savez(npz, image=images[pick], labels=data["labels"][pick])
    result = compare_models(f, q, CompareOptions(samples=SampleSettings(count=ALL, source=str(npz))))
    worst = _section(render_html(build_report(f, q, result)), "task").split("Worst samples")[1]
    assert "<th>flipped</th>" in worst
    q_tied = _ties(q, images[pick])
    assert any(q_tied) and worst.count("(tied)") >= sum(q_tied)


def test_per_class_accuracies_are_percentages(example):
    task = _section(example[3], "task")
    cells = re.findall(r'data-key="(?:float|quant)_accuracy" data-value="[^"]*">([^<]*)</td>', task)
    assert cells and all(c.endswith(" %") for c in cells), cells


def test_every_output_is_shown_and_the_cards_name_theirs(tmp_path):
    m = OutputKindFixtures(REPO / ".fixture-cache").models()
    f, q = str(m["heads_float"]), str(m["heads_int8"])
    result = compare_models(f, q, CompareOptions(samples=SampleSettings(count=4)))
    report = build_report(f, q, result)
    outs = report["comparison"]["task"]["outputs"]
    assert {o["kind"] for o in outs} == {"classification", "regression"}
    task = _section(render_html(report), "task")
    assert f"output <code>{outs[0]['name']}</code>'s" in task and "the first of 2 outputs" in task
    rows = re.findall(r"<tr><td>(output_\d)</td><td>(\w+)</td>", task)
    assert sorted(rows) == sorted((o["name"], o["kind"]) for o in outs)
    cls = next(o for o in outs if o["kind"] == "classification")
    assert f'data-key="top1_agreement" data-value="{cls["top1_agreement"]}"' in task


def test_causes_without_isolated_error_say_so(example):
    """The own error is computed by default: the report says nothing; with --no-isolated it says
    the causes were judged from the accumulated error and how to get the own error."""
    f, q, result, html = example
    assert result.isolated and 'id="causes-accumulated"' not in html
    plain = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), isolated=False))
    worst = _section(render_html(build_report(f, q, plain)), "worst-layers")
    assert 'id="causes-accumulated"' in worst and "--no-isolated" in worst


def test_a_signature_comparison_is_named_above_its_plot():
    from tests.helpers.shape_fixtures import cache_path

    f, q = (str(cache_path(REPO / ".fixture-cache", n)) for n in ("sig_float", "sig_int8"))
    result = compare_models(f, q, CompareOptions(samples=SampleSettings(count=2), signature="prefill"))
    layer_error = _section(render_html(build_report(f, q, result)), "layer-error")
    assert "(signature 'prefill', subgraph 1)" in layer_error
