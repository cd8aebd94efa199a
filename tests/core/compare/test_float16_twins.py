"""Float16 twins (issue 18 §2): the pair check measures float16 weights in float16 ulps, refuses
the float16 model of another training, says when nothing could be compared; the weight view,
the audit and `info` know float16 storage. Figures are checked against weights read with the
`tflite` package and rounded with numpy (tests/helpers/fp16_reference.py)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare import weights as W
from inspector.core.compare.pair_check import DISAGREE_STEPS, check_pair_files
from inspector.core.compare.pairing import pair_models
from inspector.core.review.audit import audit_model
from inspector.core.review.model_summary import model_summary_json, model_summary_text
from inspector.core.tflite.model import load_model
from tests.helpers.fp16_fixtures import Fp16Fixtures
from tests.helpers.fp16_reference import float16_constants, op_weights, ulp_errors
from tests.helpers.reference import sqnr_db

REPO = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def fp16() -> dict[str, Path]:
    return Fp16Fixtures(REPO / ".fixture-cache").models()


def _pairs(fp16, b: str) -> list[tuple[np.ndarray, np.ndarray]]:
    a_w, b_w = op_weights(fp16["fp16_float"]), op_weights(fp16[b])
    assert len(a_w) == len(b_w) == 4  # conv1, dw1, conv2, logits
    assert all(x.dtype == np.float32 for x in a_w) and all(y.dtype == np.float16 for y in b_w)
    return list(zip(a_w, b_w, strict=True))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip


# ------------------------------------------------------------------ pair check
def test_float16_twin_is_checked_in_float16_ulps(fp16):
    check = check_pair_files(fp16["fp16_float"], fp16["fp16_twin"])
    pairs = _pairs(fp16, "fp16_twin")
    ref = np.concatenate([ulp_errors(a, b).ravel() for a, b in pairs])
    assert check.weights_compared == 4 and check.float16_weights_compared == 4  # was 0: nothing checked
    assert check.related and check.reasons == () and check.weights_checked and check.note == ""
    for a, b in pairs:  # a true twin stores numpy's round-to-nearest float16 of A
        np.testing.assert_array_equal(b, a.astype(np.float16))
    assert check.elements_compared == check.float16_elements_compared == ref.size
    assert check.error_unit == "float16 ulps"
    assert check.float16_max_ulp_error == pytest.approx(ref.max(), abs=1e-9) and ref.max() <= 0.5
    assert check.float16_median_ulp_error == pytest.approx(np.median(ref), abs=1e-9)
    assert check.max_step_error == pytest.approx(ref.max(), abs=1e-9) and check.disagree_share == 0.0
    rel = np.concatenate([(np.abs(b.astype(np.float64) - a) / np.abs(a))[a != 0] for a, b in pairs])
    assert check.float16_max_relative_error == pytest.approx(rel.max(), rel=1e-9) and rel.max() < 2**-10
    assert check.float16_median_relative_error == pytest.approx(np.median(rel), rel=1e-9)


def test_float16_model_of_another_training_is_not_a_twin(fp16):
    check = check_pair_files(fp16["fp16_float"], fp16["fp16_other"])
    ref = np.concatenate([ulp_errors(a, b).ravel() for a, b in _pairs(fp16, "fp16_other")])
    assert not check.related  # was related: true with 0 weights compared
    assert check.disagree_share == pytest.approx(np.mean(ref > DISAGREE_STEPS), abs=1e-12)
    assert check.disagree_share > 0.5 and check.tensors_disagreeing == 4
    assert check.median_step_error == pytest.approx(np.median(ref), rel=1e-9) and check.median_step_error > 100
    assert check.p99_step_error == pytest.approx(np.percentile(ref, 99), rel=1e-9)
    assert f"{check.disagree_share:.0%} of the paired weights disagree by more than 2 float16 ulps" in check.message
    d = check.to_json()
    assert d["related"] is False and d["float16_weights_compared"] == 4 and d["error_unit"] == "float16 ulps"


def test_a_pair_where_no_weight_could_be_compared_says_so(fp16):
    """Two float32 models (both have weights, neither quantized nor float16): not `related: true`
    and silent, but 0 weights compared with a note (JSON keys extended, none renamed)."""
    check = check_pair_files(fp16["fp16_float"], fp16["fp16_float"])
    d = check.to_json()
    assert d["weights_compared"] == 0 and d["weights_checked"] is False  # was: no such key, related alone
    assert d["note"].startswith("no weight compared: 4 paired weight tensors, but B's weights are float32 like A's")
    assert "not verified" in d["note"] and d["weights_paired"] == 4
    twin = check_pair_files(fp16["fp16_float"], fp16["fp16_twin"]).to_json()
    assert twin["weights_checked"] is True and twin["note"] == ""
    assert set(twin) >= {"swapped", "related", "reasons", "weights_compared", "elements_compared", "disagree_share",
                         "median_step_error", "p99_step_error", "max_step_error", "op_coverage"}  # fmt: skip


def test_blockwise_int4_weights_are_compared_in_steps_of_their_block():
    """litert-quantizer's int4 blockwise weights (block 32) were not measured at all (the pair
    fell under "no weight compared"); in steps of each weight's own block scale, rounding keeps
    every error within half a step: a wrong block mapping would put them tens of steps away."""
    from tests.helpers.transformer_fixtures import transformer_path

    root = REPO / ".fixture-cache"
    check = check_pair_files(transformer_path(root, "float"), transformer_path(root, "int4_b32"))
    assert check.weights_compared == 13 and check.note == "" and check.related  # was 0 compared
    assert 0.45 < check.max_step_error <= 0.5 + 1e-6 and check.disagree_share == 0.0


def test_cli_refuses_another_training_and_reports_a_twin(fp16, tmp_path):
    a, other, twin = (str(fp16[n]) for n in ("fp16_float", "fp16_other", "fp16_twin"))
    proc = _cli("compare", a, other, "--samples", "2")
    assert proc.returncode == 2, proc.stderr  # was 0
    lines = proc.stderr.strip().splitlines()
    share = check_pair_files(a, other).disagree_share
    assert len(lines) == 1 and f"{share:.0%} of the paired weights disagree by more than 2 float16 ulps" in lines[0]
    assert other in lines[0] and "--allow-unrelated" in lines[0]
    report = _cli("report", a, other, "--samples", "2", "--html", str(tmp_path / "r.html"))
    assert report.returncode == 2 and f"{share:.0%} of the paired weights disagree" in report.stderr
    proc = _cli("compare", a, twin, "--samples", "2", "--json", "-")
    assert proc.returncode == 0, proc.stderr
    pc = json.loads(proc.stdout)["pair_check"]
    assert pc["related"] is True and pc["weights_compared"] == 4 and pc["float16_elements_compared"] > 0
    assert pc["float16_max_ulp_error"] <= 0.5 and pc["note"] == ""
    # a float model with itself is no pair (issue 34 §2: it was exit 0 with the note alone); allowed,
    # the note says the pair is unverified
    refused = _cli("compare", a, a, "--samples", "2")
    assert refused.returncode == 2 and "are the same model" in refused.stderr and len(refused.stderr.splitlines()) == 1
    same = _cli("compare", a, a, "--samples", "2", "--allow-unrelated", "--json", str(tmp_path / "s.json"))
    assert same.returncode == 0 and "note: no weight compared" in same.stderr
    assert json.loads((tmp_path / "s.json").read_text())["pair_check"]["weights_checked"] is False
    html = tmp_path / "s.html"
    assert _cli("report", a, a, "--samples", "2", "--allow-unrelated", "--html", str(html)).returncode == 0
    assert "no weight compared: 4 paired weight tensors" in html.read_text()


# ------------------------------------------------------------------ weight view
def test_weight_view_shows_the_float16_rounding_error(fp16):
    from inspector.core.viewdata.weight_view import float16_summary

    ma, mb = load_model(str(fp16["fp16_float"])), load_model(str(fp16["fp16_twin"]))
    pairing = pair_models(ma, mb)
    ref = {a.shape: (a, b) for a, b in _pairs(fp16, "fp16_twin")}
    seen = 0
    for p in pairing.ops:
        tb = W.weight_tensor_of(mb.main, mb.main.ops[p.quant_op])
        ta = W.weight_tensor_of(ma.main, ma.main.ops[p.float_op])
        if tb is None or tuple(mb.main.tensors[tb].shape) not in ref or mb.main.tensors[tb].dtype != "float16":
            continue
        a, b = ref[tuple(mb.main.tensors[tb].shape)]
        w = W.analyze_tensors(ma, ma.main.tensors[ta], mb, mb.main.tensors[tb])
        f = w.float16
        assert f is not None  # was: no float16 figures
        u = ulp_errors(a, b)
        assert f.elements == a.size and f.max_ulp == pytest.approx(u.max(), abs=1e-9)
        assert f.mean_ulp == pytest.approx(u.mean(), rel=1e-9) and f.within_half_ulp == 1.0
        assert w.metrics.sqnr_db == pytest.approx(sqnr_db(a, a.astype(np.float16)), rel=1e-9)
        assert w.metrics.max_abs == pytest.approx(np.max(np.abs(a.astype(np.float64) - b)), rel=1e-9)
        assert (f.overflow, f.flushed, f.nan) == (0, 0, 0)
        assert f.subnormal == np.sum((b != 0) & (np.abs(b.astype(np.float64)) < 2.0**-14))
        text = float16_summary(w)
        assert f"max {u.max():.3g} ulp" in text and "no overflow, flush to zero or NaN" in text
        seen += 1
    assert seen == 4


# ------------------------------------------------------------------ audit
def test_audit_flags_float16_overflow_flush_and_nan(fp16):
    a, b = load_model(str(fp16["fp16_planted_float"])), load_model(str(fp16["fp16_planted"]))
    (kernel_a,) = [x for x in op_weights(fp16["fp16_planted_float"]) if x.shape == (16, 8)]
    (kernel_b,) = [x for x in op_weights(fp16["fp16_planted"]) if x.shape == (16, 8)]
    a64 = kernel_a.astype(np.float64)
    over = int(np.sum(np.abs(a64) > 65504))
    flushed = int(np.sum((a64 != 0) & np.isfinite(a64) & (kernel_b == 0)))
    nans = int(np.sum(np.isnan(kernel_b)))
    assert (over, flushed, nans) == (2, 1, 1)  # what was planted, as the converter stored it
    assert np.all(np.abs(kernel_b[np.abs(a64) > 65504]) == 65504)  # TF's converter saturates, no inf
    alone = {f.rule: f for f in audit_model(b) if f.rule.startswith("float16-")}  # B alone: what its values show
    assert alone["float16-overflow"].observed == over and alone["float16-nan"].observed == nans  # was: no finding
    findings = {f.rule: f for f in audit_model(b, None, a) if f.rule.startswith("float16-")}
    assert set(findings) == {"float16-overflow", "float16-nan", "float16-flush-to-zero"}
    assert findings["float16-overflow"].severity == "error" and findings["float16-overflow"].observed == over
    assert "saturated to ±65504" in findings["float16-overflow"].message and "100000" in findings["float16-overflow"].message
    assert findings["float16-nan"].severity == "error" and findings["float16-nan"].observed == nans
    assert findings["float16-flush-to-zero"].severity == "warning" and findings["float16-flush-to-zero"].observed == flushed
    assert alone["float16-flush-to-zero"].severity == "info"  # alone, a zero cannot be told from a flushed value
    assert not [f for f in audit_model(load_model(str(fp16["fp16_twin"])), None, load_model(str(fp16["fp16_float"])))
                if f.severity in ("error", "warning") and f.rule.startswith("float16-")]  # fmt: skip


# ------------------------------------------------------------------ info
def test_info_counts_float16_weights(fp16):
    m = load_model(str(fp16["fp16_twin"]))
    ref = float16_constants(fp16["fp16_twin"])
    d = model_summary_json(m)["float16_weights"]
    assert d["tensors"] == len(ref) == 8 and d["elements"] == sum(x.size for x in ref)
    assert d["bytes"] == 2 * d["elements"] and d["behind_dequantize"] == 8
    line = f"float16 weights: 8 constant tensors stored as float16 ({d['elements']:,} values"
    assert line in model_summary_text(m)
    assert model_summary_json(load_model(str(fp16["fp16_float"])))["float16_weights"]["tensors"] == 0
    proc = _cli("info", str(fp16["fp16_twin"]), "--json", "-")
    assert proc.returncode == 0 and json.loads(proc.stdout)["float16_weights"]["tensors"] == 8


# ------------------------------------------------------------------ the comparison on a float16 B
def test_comparison_of_a_float16_twin_matches_numpy(fp16, tmp_path):
    """Activations of a float16 model are float (no scale): each layer's SQNR and max error are
    those of the two interpreters' own tensors, and the step-based figures are absent."""
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.samples.settings import SampleSettings
    from tests.helpers.reference import preserving_interpreter
    from tests.helpers.task_fixtures import make_dataset

    x, _ = make_dataset(3, seed=7)
    path = tmp_path / "x.npz"
    np.savez(path, image=x.astype(np.float32))
    fa, fb = str(fp16["fp16_float"]), str(fp16["fp16_twin"])
    res = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=None, source=str(path)), runtime="reference"))
    runs = []
    for p in (fa, fb):
        it = preserving_interpreter(p)
        vals = []
        for i in range(len(x)):
            it.set_tensor(it.get_input_details()[0]["index"], x[i : i + 1].astype(np.float32))
            it.invoke()
            vals.append({d["index"]: np.array(it.get_tensor(d["index"])) for d in it.get_tensor_details()
                         if d["dtype"] == np.float32 and len(d["shape"])})  # fmt: skip
        runs.append(vals)
    assert len(res.layers) == 6
    for layer in res.layers:
        xa = np.stack([v[layer.float_tensor] for v in runs[0]]).astype(np.float64)
        xb = np.stack([v[layer.quant_tensor] for v in runs[1]]).astype(np.float64)
        m = layer.metrics
        assert m.sqnr_db == pytest.approx(sqnr_db(xa, xb), rel=1e-6), layer.op_type
        assert m.max_abs == pytest.approx(np.max(np.abs(xa - xb)), rel=1e-6)
        assert m.rmse_over_scale is None and m.clip_rate is None and math.isfinite(m.sqnr_db)
        assert 50 < m.sqnr_db < 120  # float16 weights: small but real errors
