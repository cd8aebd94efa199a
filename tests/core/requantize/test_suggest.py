"""Suggest: greedy keep-float search, checked by re-running the suggested plan independently."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.errors import Cancelled, InputError
from inspector.core.progress import TaskState
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.quantizer_route import requantize, save_model
from inspector.core.requantize.suggest import SuggestOptions, suggest
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.requant_fixtures import cache_path

REPO = Path(__file__).resolve().parents[3]
OPTS = SuggestOptions(samples=SampleSettings(count=4, seed=0), candidates=6)


@pytest.fixture(scope="module")
def pair(tmp_path_factory) -> tuple[Path, Path]:
    fcn = cache_path(REPO / ".fixture-cache", "fcn")
    quant = tmp_path_factory.mktemp("suggest") / "fcn_int8.tflite"
    save_model(requantize(fcn, Plan(), sample_settings=SampleSettings(4)), quant)
    return fcn, quant


def _independent_output_sqnr(
    float_path: Path, quant_bytes: bytes, quant_path_for_inputs: Path
) -> float:
    """Output SQNR over the comparison's own samples, run here with the interpreter + numpy."""
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.samples.sources import random_source

    fm, qm = load_model(float_path), load_model(quant_path_for_inputs)
    samples = list(random_source(fm, qm, OPTS.samples.count, OPTS.samples.seed))
    f_run = Interpreter(model_path=str(float_path)).get_signature_runner()
    q_run = Interpreter(model_content=quant_bytes).get_signature_runner()
    ref = np.concatenate([f_run(image=s.inputs[0])["output_0"] for s in samples]).astype(np.float64)
    got = np.concatenate([q_run(image=s.inputs[0])["output_0"] for s in samples]).astype(np.float64)
    return float(10 * np.log10(np.sum(ref**2) / np.sum((ref - got) ** 2)))


def test_suggestion_meets_target_and_is_verified(pair, tmp_path):
    fcn, quant = pair
    first = suggest(fcn, quant, None, SuggestOptions(samples=SampleSettings(count=4, seed=0), candidates=6, max_layers=0))
    baseline = first.points[1].output_sqnr_db
    target = baseline + 1.0
    r = suggest(fcn, quant, target, OPTS)
    assert r.met and 1 <= len(r.layers) <= 8
    best = r.layers[-1]["output_sqnr_db"]
    assert best >= target
    # the points hold every evaluated model; the best one is among them
    assert r.points[0].label.endswith("(given)") and any(
        math.isclose(p.output_sqnr_db, best) for p in r.points
    )
    assert all(p.size_bytes > 0 for p in r.points)
    # re-run the suggested plan from scratch and measure without compare.py
    again = requantize(fcn, r.plan, sample_settings=OPTS.samples)
    assert again.model_bytes == r.best.model_bytes
    saved = tmp_path / "suggested.tflite"
    save_model(again, saved)
    assert abs(_independent_output_sqnr(fcn, again.model_bytes, saved) - best) < 0.05
    assert {again.treatments[x["op"]] for x in r.layers} == {"keep_float"}


def test_layer_budget_and_a16w8(pair):
    fcn, quant = pair
    r = suggest(
        fcn,
        quant,
        None,
        SuggestOptions(samples=SampleSettings(count=4, seed=0), candidates=3, max_layers=1, treatment="a16w8"),
    )
    assert r.met and len(r.layers) == 1
    assert len(r.points) == 2 + 3  # given, requantized baseline, one try per candidate
    assert r.best.treatments[r.layers[0]["op"]].startswith("a16w8")


def test_bad_requests(pair):
    fcn, quant = pair
    with pytest.raises(InputError):
        suggest(fcn, quant, None, SuggestOptions())
    with pytest.raises(InputError):
        suggest(fcn, quant, 30.0, SuggestOptions(treatment="dynamic"))
    with pytest.raises(Cancelled):
        suggest(fcn, quant, 99.0, OPTS, task=TaskState(is_cancelled=lambda: True))


def test_cli_suggest_exit_codes(pair, tmp_path, capsys):
    fcn, quant = pair
    out = tmp_path / "s.json"
    common = ["suggest", str(fcn), str(quant), "--route", "quantizer", "--samples", "4", "--candidates", "2"]
    assert main([*common, "--target-sqnr", "1", "--json", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["met"] and data["points"] and data["recipe"]
    assert main([*common, "--target-sqnr", "500", "--max-float-layers", "1"]) == 1
    assert "not reached" in capsys.readouterr().out
    assert main(["suggest", str(fcn), str(quant)]) == 2
