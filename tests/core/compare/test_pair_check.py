"""Pair sanity: swapped pairs are swapped back, pairs that are not twins are refused with figures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.pair_check import DISAGREE_STEPS, check_pair_files
from tests.helpers.pair_fixtures import PairFixtures

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def pairs() -> dict[str, Path]:
    return PairFixtures(REPO / ".fixture-cache").models()


def _weights(path: Path) -> dict[tuple[int, ...], tuple[np.ndarray, np.ndarray | None, int]]:
    """Rank >= 2 constant tensors by shape: (values, scales or None, quantized dimension),
    read through the interpreter (independent of the inspector's flatbuffer reader)."""
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    out = {}
    for d in it.get_tensor_details():
        if len(d["shape"]) < 2 or d["dtype"] not in (np.float32, np.int8):
            continue
        try:
            v = it.get_tensor(d["index"])
        except ValueError:
            continue
        qp = d["quantization_parameters"]
        if ";" in d["name"] or d["name"].rsplit("/", 1)[-1] not in ("convolution", "depthwise", "MatMul"):
            continue  # the converter names weights after the Keras op that reads them
        if d["dtype"] == np.int8 and len(qp["scales"]):
            out[tuple(d["shape"])] = (v.copy(), qp["scales"].astype(np.float64), int(qp["quantized_dimension"]))
        elif d["dtype"] == np.float32:
            out[tuple(d["shape"])] = (v.copy(), None, 0)
    return out


def _independent_step_errors(float_path: Path, quant_path: Path) -> np.ndarray:
    fw, qw = _weights(float_path), _weights(quant_path)
    errs = []
    for shape, (q, scales, axis) in qw.items():
        if scales is None or shape not in fw or fw[shape][1] is not None:
            continue
        bshape = [1] * q.ndim
        bshape[axis] = len(scales)
        s = scales.reshape(bshape) if len(scales) > 1 else scales[0]
        errs.append((np.abs(q.astype(np.float64) * s - fw[shape][0]) / s).ravel())
    assert len(errs) == 4  # conv1, dw1, conv2, logits
    return np.concatenate(errs)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip


def test_twin_pair_passes_with_rounding_sized_errors(pairs):
    check = check_pair_files(pairs["seed21_float"], pairs["seed21_int8"])
    ref = _independent_step_errors(pairs["seed21_float"], pairs["seed21_int8"])
    assert check.related and not check.swapped and check.reasons == ()
    assert check.elements_compared == ref.size
    assert check.max_step_error == pytest.approx(ref.max(), abs=1e-6) and ref.max() <= 0.5 + 1e-4
    assert check.median_step_error == pytest.approx(np.median(ref), abs=1e-6)
    assert check.disagree_share == 0.0 and check.op_coverage == 1.0


def test_unrelated_pair_figures_match_an_independent_computation(pairs):
    check = check_pair_files(pairs["seed21_float"], pairs["seed22_int8"])
    ref = _independent_step_errors(pairs["seed21_float"], pairs["seed22_int8"])
    assert not check.related
    assert check.disagree_share == pytest.approx(np.mean(ref > DISAGREE_STEPS), abs=1e-9)
    assert check.disagree_share > 0.5
    assert check.median_step_error == pytest.approx(np.median(ref), rel=1e-9)
    assert check.p99_step_error == pytest.approx(np.percentile(ref, 99), rel=1e-9)
    assert check.p99_step_error > 20  # another model: tens of steps, not rounding


def test_compare_refuses_unrelated_pair_naming_the_share(pairs, tmp_path):
    proc = _cli("compare", str(pairs["seed21_float"]), str(pairs["seed22_int8"]), "--samples", "2")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1
    share = check_pair_files(pairs["seed21_float"], pairs["seed22_int8"]).disagree_share
    assert f"{share:.0%} of the paired weights disagree" in lines[0]
    assert str(pairs["seed22_int8"]) in lines[0] and "--allow-unrelated" in lines[0]

    out = tmp_path / "c.json"
    proc = _cli("compare", str(pairs["seed21_float"]), str(pairs["seed22_int8"]), "--samples", "2",
                "--allow-unrelated", "--json", str(out))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    pc = json.loads(out.read_text())["pair_check"]
    assert pc["related"] is False and pc["disagree_share"] == pytest.approx(share)


def test_compare_twin_pair_has_no_warning(pairs, tmp_path):
    out = tmp_path / "c.json"
    proc = _cli("compare", str(pairs["seed21_float"]), str(pairs["seed21_int8"]), "--samples", "2", "--json", str(out))
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip() == ""
    d = json.loads(out.read_text())
    assert d["swapped"] is False and d["pair_check"]["related"] is True and d["pair_check"]["reasons"] == []
    assert d["samples_are_random"] is True


def test_a_comparison_given_the_pair_check_does_not_make_it_again(example_pair, monkeypatch):
    """The CLI checks the pair before it compares and hands the check on: `check_pair` (every
    paired weight read) runs once per command, not again inside the comparison."""
    import inspector.core.compare.comparison as comparison
    from inspector.core.compare.pair_check import check_pair
    from inspector.core.compare.pairing import pair_models
    from inspector.core.samples.settings import SampleSettings
    from inspector.core.tflite.model import Model

    f, q = (str(p) for p in example_pair)
    fm, qm = Model(f), Model(q)
    check = check_pair(fm, qm, pair_models(fm, qm))
    monkeypatch.setattr(comparison, "check_pair", lambda *a: pytest.fail("the pair check ran again"))
    monkeypatch.setattr(comparison, "cached", lambda key, build: build())  # no process cache to hide a second run
    opts = comparison.CompareOptions(samples=SampleSettings(count=1), threads=1)
    result = comparison.compare_models(f, q, opts, pair_check=check)
    assert result.pair_check is check and result.pair_check.related
    with pytest.raises(pytest.fail.Exception, match="ran again"):
        comparison.compare_models(f, q, opts)


def test_swapped_pair_is_compared_the_right_way_round(example_pair, tmp_path):
    f, q = (str(p) for p in example_pair)
    straight, swapped = tmp_path / "straight.json", tmp_path / "swapped.json"
    a = _cli("compare", f, q, "--samples", "3", "--json", str(straight))
    b = _cli("compare", q, f, "--samples", "3", "--json", str(swapped))
    assert a.returncode == 0 and b.returncode == 0, b.stderr
    assert "swapped" not in a.stderr and "note" not in a.stderr
    # (the bundled example pair also says, in a line of its own, that it used its bundled inputs)
    note = [line for line in b.stderr.strip().splitlines() if "bundled example pair" not in line]
    assert len(note) == 1 and "note:" in note[0] and f"{f} is the float model" in note[0]
    ds, dw = json.loads(straight.read_text()), json.loads(swapped.read_text())
    assert dw["swapped"] is True and ds["swapped"] is False
    assert dw["pair_check"]["swapped"] is True
    assert (dw["float"], dw["quant"]) == (f, q)
    assert [x["metrics"]["sqnr_db"] for x in dw["layers"]] == [x["metrics"]["sqnr_db"] for x in ds["layers"]]
    assert dw["outputs"][0]["metrics"]["sqnr_db"] > 20


def test_one_broken_layer_is_a_finding_not_another_model():
    from tests.helpers.task_fixtures import BROKEN_LAYER, TaskFixtures

    models = TaskFixtures(REPO / ".fixture-cache").models()
    check = check_pair_files(models["cls_float"], models["cls_int8_broken"])
    assert check.related and check.tensors_disagreeing == 1
    from inspector.core.tflite.model import load_model

    qm = load_model(str(models["cls_int8_broken"]))
    (op, median), = check.disagreeing_ops
    assert BROKEN_LAYER in qm.main.tensors[qm.main.ops[op].outputs[0]].name
    assert median > 8  # weight scale x8: dequantized weights are 7/8 of their value away, in 8x steps
    assert f"op {op}" in check.message


def test_report_swaps_back_and_refuses_unrelated(pairs, example_pair, tmp_path):
    f, q = (str(p) for p in example_pair)
    html = tmp_path / "r.html"
    proc = _cli("report", q, f, "--samples", "2", "--html", str(html))
    assert proc.returncode == 0, proc.stderr
    assert "note:" in proc.stderr
    text = html.read_text()
    assert "wrong way round" in text and "example_float.tflite vs example_int8.tflite" in text
    proc = _cli("report", str(pairs["seed21_float"]), str(pairs["seed22_int8"]), "--samples", "2",
                "--html", str(tmp_path / "u.html"))  # fmt: skip
    assert proc.returncode == 2 and "of the paired weights disagree" in proc.stderr
    assert not (tmp_path / "u.html").exists()
    proc = _cli("report", str(pairs["seed21_float"]), str(pairs["seed22_int8"]), "--samples", "2",
                "--html", str(tmp_path / "u.html"), "--allow-unrelated")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "Not a float/quantized twin pair" in (tmp_path / "u.html").read_text()
