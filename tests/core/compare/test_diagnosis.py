"""Diagnosis per layer: each cause planted into a trained model's int8 twin by editing B's
flatbuffer, found, and removed by the edit the diagnosis proposes (applied through the surgical
requantize) by >= 6 dB of that layer's SQNR; healthy converter-built twins raise no alarm; every
threshold sits between the figures measured on healthy twins and on the plants.

Independent references: the per-channel mean error against numpy on LiteRT's own tensors
(`experimental_preserve_all_tensors`); the SQNR after the fix from the comparison of the edited
file; the plants are made with the `ai_edge_litert` flatbuffer utilities, not the app's editor.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import (
    THRESHOLDS,
    bias_share,
    clip_error_bound,
    weight_sqnr_db,
)
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers import diagnosis_fixtures as dx
from tests.helpers.paths import REPO
from tests.helpers.reference import preserving_interpreter
from tests.helpers.task_fixtures import TaskFixtures, make_dataset

EDIT_KIND = {"weight_rounding": "weight_mse"}  # the diagnosis' edit name -> the surgical plan's kind


@pytest.fixture(scope="module")
def diag(tmp_path_factory):
    paths = dx.models(REPO / ".fixture-cache")
    f, q = paths["diag_float"], paths["diag_int8"]
    folder = tmp_path_factory.mktemp("diag")
    cal = folder / "cal.npz"
    np.savez(cal, image=make_dataset(32, seed=3)[0])
    data = q.read_bytes()
    ops = {name: dx.op_index(q, name) for name in ("conv1", "dw", "conv2")}
    plants = {
        "clipping": (dx.scale_output(data, ops["conv2"], 0.25), ops["conv2"]),
        "resolution": (dx.scale_output(data, ops["conv2"], 12.0), ops["conv2"]),
        "weight_channels": (dx.per_tensor_weights(data, ops["dw"]), ops["dw"]),
        "bias_shift": (dx.shift_bias(data, ops["conv2"], 3.0), ops["conv2"]),
        "weight_rounding": (dx.coarsen_weights(data, ops["conv2"], 16), ops["conv2"]),
    }
    files = {}
    for cause, (b, op) in plants.items():
        p = folder / f"{cause}.tflite"
        p.write_bytes(b)
        files[cause] = (p, op)
    evals = TaskFixtures(REPO / ".fixture-cache").npz(40)
    return {"float": f, "int8": q, "plants": files, "cal": cal, "eval": evals, "dir": folder}


def _compare(f, q, source, isolated=True, runtime="optimized"):
    opts = CompareOptions(samples=SampleSettings(count=40, seed=1, source=str(source)), isolated=isolated, runtime=runtime)
    return compare_models(str(f), str(q), opts)


def _layer(res, op):
    return next(lay for lay in res.layers if lay.op_index == op)


@pytest.mark.parametrize("cause", ["clipping", "resolution", "weight_channels", "bias_shift", "weight_rounding"])
def test_a_planted_cause_is_found_and_its_fix_gains_6_db(diag, cause):
    path, op = diag["plants"][cause]
    before = _layer(_compare(diag["float"], path, diag["eval"]), op)
    d = before.diagnosis
    assert d.cause == cause, d
    assert d.fix is not None and d.fix.ops == (op,)
    expected = {"clipping": "recalibrate", "resolution": "recalibrate", "weight_channels": "per_channel",
                "bias_shift": "bias_correct", "weight_rounding": "weight_rounding"}  # fmt: skip
    assert d.fix.edit == expected[cause]
    assert any(ch.isdigit() for ch in d.evidence) and "\n" not in d.evidence
    plan = SurgicalPlan((Edit(EDIT_KIND.get(d.fix.edit, d.fix.edit), f"op:{op}"),), samples=SampleSettings(count=32, source=str(diag["cal"])))
    fixed = diag["dir"] / f"{cause}_fixed.tflite"
    fixed.write_bytes(apply_plan(str(diag["float"]), str(path), plan).model_bytes)
    after = _layer(_compare(diag["float"], fixed, diag["eval"]), op)
    assert after.metrics.sqnr_db >= before.metrics.sqnr_db + 6.0, (before.metrics.sqnr_db, after.metrics.sqnr_db)
    assert after.diagnosis.cause not in (cause, "clipping", "resolution", "bias_shift")


def test_downstream_layers_point_at_the_planted_layer(diag):
    path, op = diag["plants"]["clipping"]
    res = _compare(diag["float"], path, diag["eval"])
    down = [lay for lay in res.layers if lay.op_index > op and lay.diagnosis.cause == "inherited"]
    assert down, [(lay.op_index, lay.diagnosis) for lay in res.layers]
    for lay in down:
        assert lay.diagnosis.source_op == op and f"op {op}" in lay.diagnosis.evidence
        assert lay.diagnosis.fix is not None and lay.diagnosis.fix.edit == "recalibrate"
    from inspector.core.compare.result import ComparisonResult

    back = ComparisonResult.from_json(json.loads(json.dumps(res.to_json())))  # a session reloads these
    assert [lay.diagnosis for lay in back.layers] == [lay.diagnosis for lay in res.layers]


def _healthy(diag):
    tf = TaskFixtures(REPO / ".fixture-cache")
    cls = tf.models()
    return [
        _compare(diag["float"], diag["int8"], diag["eval"]),
        _compare(cls["cls_float"], cls["cls_int8"], tf.npz(40)),
    ]


def test_healthy_twins_raise_no_alarm_and_every_threshold_is_measured(diag):
    from tests.helpers.transformer_fixtures import transformer_path

    healthy = _healthy(diag)
    tf_f, tf_q = transformer_path(REPO / ".fixture-cache", "float"), transformer_path(REPO / ".fixture-cache", "int8")
    transformer = compare_models(str(tf_f), str(tf_q), CompareOptions(samples=SampleSettings(count=8, seed=0), isolated=True))
    # the transformer's layer-norm variance uses 8-16% of its range at 42-57 dB: no resolution alarm
    assert any(lay.metrics.range_use is not None and lay.metrics.range_use < THRESHOLDS.range_use and lay.metrics.sqnr_db > 40
               for lay in transformer.layers)  # fmt: skip
    for res in [*healthy, transformer]:
        for lay in res.layers:
            if lay.metrics.sqnr_db > 35.0:
                assert lay.diagnosis.cause not in ("clipping", "resolution", "bias_shift"), (lay.op_index, lay.diagnosis)
    # Each threshold separates what healthy twins show from what the plants show.
    h_layers = [lay for res in healthy for lay in res.layers]
    own = [lay.isolated.rmse_over_scale for lay in h_layers if lay.isolated is not None and lay.op_type != "SOFTMAX"]
    shares = [s for s in (bias_share(lay.isolated) for lay in h_layers) if s is not None]
    uses = [lay.metrics.range_use for lay in h_layers if lay.metrics.range_use is not None and lay.op_type != "SOFTMAX"]
    planted = {c: _layer(_compare(diag["float"], p, diag["eval"]), op) for c, (p, op) in diag["plants"].items()}
    print("healthy: max own RMSE/S", max(own), "max bias share", max(shares), "min range use", min(uses))
    causes = ("clipping", "weight_channels", "bias_shift", "weight_rounding")
    assert max(own) < THRESHOLDS.own_excess <= min(planted[c].isolated.rmse_over_scale for c in causes)
    assert max(shares) < THRESHOLDS.bias_share <= bias_share(planted["bias_shift"].isolated)
    assert min(uses) > THRESHOLDS.range_use > planted["resolution"].metrics.range_use
    assert planted["clipping"].metrics.clip_rate >= THRESHOLDS.clip_rate
    assert clip_error_bound(planted["clipping"]) / planted["clipping"].isolated.mse >= THRESHOLDS.clip_share
    wsq = [weight_sqnr_db(load_model(res.float_path), load_model(res.quant_path), lay) for res in healthy for lay in res.layers]
    wsq = [v for v in wsq if v is not None]
    coarse = weight_sqnr_db(load_model(diag["float"]), load_model(diag["plants"]["weight_rounding"][0]), planted["weight_rounding"])
    print("healthy: min weight SQNR", min(wsq), "coarse", coarse)
    assert len(wsq) >= 6 and min(wsq) > THRESHOLDS.weight_sqnr_db > coarse
    # the healthy softmax saturates at 255/256 (its fixed grid): never a clipping alarm
    assert all(lay.diagnosis.cause != "clipping" for lay in h_layers if lay.op_type == "SOFTMAX")


def test_per_channel_mean_error_matches_numpy_on_litert_tensors(diag):
    path, op = diag["plants"]["bias_shift"]
    res = _compare(diag["float"], path, diag["eval"], isolated=False, runtime="reference")
    lay = _layer(res, op)
    x_all = np.load(diag["eval"])["image"][:40]
    fi, qi = preserving_interpreter(diag["float"]), preserving_interpreter(path)
    errs = []
    for x in x_all:
        for it in (fi, qi):
            it.set_tensor(it.get_input_details()[0]["index"], x[None].astype(np.float32))
            it.invoke()
        xf = fi.get_tensor(lay.float_tensor).astype(np.float64)
        d = qi.get_tensor_details()[lay.quant_tensor]
        s, z = d["quantization"]
        yq = (qi.get_tensor(lay.quant_tensor).astype(np.float64) - z) * s
        errs.append((xf - yq).reshape(-1, xf.shape[-1]).mean(axis=0))
    errs = np.stack(errs)
    np.testing.assert_allclose(lay.metrics.per_channel_mean_error, errs.mean(axis=0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(lay.metrics.per_channel_mean_stderr, errs.std(axis=0, ddof=1) / math.sqrt(len(errs)), rtol=1e-3, atol=1e-7)


def test_compare_json_carries_the_diagnosis_with_the_contract_keys(diag, tmp_path):
    path, op = diag["plants"]["resolution"]
    out = tmp_path / "c.json"
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "compare", str(diag["float"]), str(path), "--inputs", str(diag["eval"]),
         "--samples", "8", "--isolated", "--json", str(out)],
        capture_output=True, text=True, cwd=REPO,
    )
    assert r.returncode == 0, r.stderr
    layers = json.loads(out.read_text())["layers"]
    for lay in layers:
        d = lay["diagnosis"]
        assert set(d) == {"cause", "evidence", "fix", "blame"}  # blame: issue 33, measured where a candidate
        assert d["fix"] is None or set(d["fix"]) == {"edit", "ops"}
        assert d["blame"] is None or set(d["blame"]) == {"share", "gain_db"}
    d = next(lay for lay in layers if lay["op_index"] == op)["diagnosis"]
    assert d["cause"] == "resolution" and d["fix"] == {"edit": "recalibrate", "ops": [op]}
    r = subprocess.run(
        [sys.executable, "-m", "inspector", "compare", str(diag["float"]), str(path), "--inputs", str(diag["eval"]),
         "--samples", "8", "--isolated"],
        capture_output=True, text=True, cwd=REPO,
    )  # the text table names the cause and the fix on the layer's row
    row = next(line for line in r.stdout.splitlines() if line.split()[:1] == [str(op)])
    assert row.endswith(f"resolution -> recalibrate op {op}")


def test_kernel_cause_from_runtime_parity(diag):
    from inspector.core.compare.diagnosis import diagnose
    from inspector.core.compare.parity_result import Difference, LayerParity, RuntimeParityResult

    res = _compare(diag["float"], diag["int8"], diag["eval"])
    fm, qm = load_model(diag["float"]), load_model(diag["int8"])
    lay = res.layers[1]

    def parity(*layers: LayerParity) -> RuntimeParityResult:
        return RuntimeParityResult(str(diag["int8"]), ("reference", "optimized"), (1, 1), 8, layers, (), subgraph=0)

    five = LayerParity(lay.op_index, lay.op_type, lay.tensor_name, lay.quant_tensor, 0.2, 5.0, True, {"optimized": Difference(0.2, 5.0)})
    found = diagnose(fm, qm, res.layers, parity(five))
    assert found[lay.op_index].cause == "kernel" and "5 LSB" in found[lay.op_index].evidence
    assert found[lay.op_index].fix is None
    one_lsb = LayerParity(lay.op_index, lay.op_type, lay.tensor_name, lay.quant_tensor, 0.01, 1.0, True, None)
    assert diagnose(fm, qm, res.layers, parity(one_lsb))[lay.op_index].cause != "kernel"  # 1 LSB: ordinary rounding


def test_suggest_ranks_diagnosed_layers_first_and_tries_their_fix_first(diag):
    from inspector.core.requantize.suggest_surgical import SurgicalSuggestOptions, suggest_surgical

    path, op = diag["plants"]["weight_channels"]
    opts = SurgicalSuggestOptions(samples=SampleSettings(count=16, source=str(diag["cal"])), max_steps=1, candidates=3)
    res = suggest_surgical(str(diag["float"]), str(path), None, opts)
    first = res.candidates[0]
    assert (first["op"], first["type"], first["cause"]) == (op, "DEPTHWISE_CONV_2D", "weight_channels")
    assert res.steps and res.steps[0].ops == (op,)
    cheap = [p.edits[-1] for p in res.points if not p.edits[-1].startswith("keep_float")]
    assert cheap and cheap[0] == f"per_channel op:{op}"  # the diagnosed edit before recalibrate / bias_correct


def test_report_lists_the_causes(diag):
    from inspector.core.review.report import build_report
    from inspector.core.review.report_html import render_html

    path, op = diag["plants"]["clipping"]
    res = _compare(diag["float"], path, diag["eval"])
    report = build_report(str(diag["float"]), str(path), res)
    rows = report["causes"]
    assert rows[0]["op_index"] == op and rows[0]["cause"] == "clipping" and rows[0]["fix"] == {"edit": "recalibrate", "ops": [op]}
    assert rows[0]["inheriting"] and all(i > op for i in rows[0]["inheriting"])
    html = render_html(report)
    assert f'id="cause-op-{op}"' in html and "<b>clipping</b>" in html and "recalibrate on op" in html


def test_fix_plan_and_outcome_text(diag):
    from inspector.core.requantize.diagnosis_fix import fix_outcome, fix_plan

    path, op = diag["plants"]["bias_shift"]
    before = _compare(diag["float"], path, diag["eval"])
    fix = _layer(before, op).diagnosis.fix
    plan = fix_plan(fix, SampleSettings(count=32, source=str(diag["cal"])))
    assert [(e.kind, e.ops) for e in plan.edits] == [("bias_correct", (op,))]
    fixed = diag["dir"] / "outcome.tflite"
    fixed.write_bytes(apply_plan(str(diag["float"]), str(path), plan).model_bytes)
    after = _compare(diag["float"], fixed, diag["eval"])
    lines = fix_outcome(before, after, fix)
    b, a = _layer(before, op).metrics.sqnr_db, _layer(after, op).metrics.sqnr_db
    assert lines[0].startswith(f"op {op} CONV_2D: SQNR {b:.2f} → {a:.2f} dB") and "cause now: none" in lines[0]
    assert lines[-1].startswith("model output SQNR")


def _clip_power(fpath, qpath, source, lay) -> float:
    """numpy on LiteRT's tensors: mean((x - clamp(x, lo, hi))^2) over every element of A's value
    of the layer's tensor on the samples of `source`, [lo, hi] B's representable range (int8)."""
    data = np.load(source)
    images = data[data.files[0]]
    it = preserving_interpreter(fpath)
    inp = it.get_input_details()[0]
    xs = []
    for i in range(len(images)):
        it.set_tensor(inp["index"], images[i : i + 1])
        it.invoke()
        xs.append(it.get_tensor(lay.float_tensor).astype(np.float64))
    x = np.concatenate(xs)
    q = next(d for d in preserving_interpreter(qpath).get_tensor_details() if d["index"] == lay.quant_tensor)
    s, z = q["quantization"]
    lo, hi = s * (-128 - z), s * (127 - z)
    return float(np.mean((x - np.clip(x, lo, hi)) ** 2))


def _clip_alarm(lay) -> bool:
    """The conditions under which the clip share decides (a clip rate and a large own error)."""
    return lay.metrics.clip_rate >= THRESHOLDS.clip_rate and lay.isolated.rmse_over_scale >= THRESHOLDS.own_excess


def test_a_little_clipping_beside_weight_error_is_not_called_clipping(diag):
    """MobileNetV2's converter-built per-tensor twin: its last FC saturates 0.19% of the float
    values beside a large own error. Whether clipping is the cause is checked against numpy on
    LiteRT's tensors: the error power clipping causes there (A's values beyond B's range) over the
    FC's own MSE. Measured here: 0.39, so not `clipping` (the whole-tensor bound, clip rate x
    largest overshoot^2, read 1.15 of the own MSE on this machine and called it clipping). The
    planted clipping's share is measured on the other side of the threshold. The estimate the
    diagnosis uses is an upper bound of the numpy figure, and its decision agrees with numpy."""
    from tests.helpers.surgical_fixtures import cache_paths, npz

    paths = cache_paths(REPO / ".fixture-cache")
    source = npz(REPO / ".fixture-cache", "eval", 16, 2)
    res = _compare(paths["mnv2_float"], paths["mnv2_int8_per_tensor"], source)
    fc = next(lay for lay in res.layers if lay.op_type == "FULLY_CONNECTED")
    power = _clip_power(paths["mnv2_float"], paths["mnv2_int8_per_tensor"], source, fc)
    share = power / fc.isolated.mse
    path, op = diag["plants"]["clipping"]
    planted = _layer(_compare(diag["float"], path, diag["eval"]), op)
    planted_share = _clip_power(diag["float"], path, diag["eval"], planted) / planted.isolated.mse
    print(f"clipping's share of the own error: MobileNetV2 FC {share:.3f} (estimate "
          f"{clip_error_bound(fc) / fc.isolated.mse:.3f}), planted {planted_share:.2f}")  # fmt: skip
    assert fc.metrics.clip_rate > 0 and power > 0  # the FC does clip
    assert share < THRESHOLDS.clip_share <= planted_share
    for lay, sh in ((fc, share), (planted, planted_share)):
        estimate = clip_error_bound(lay) / lay.isolated.mse
        # never below what clipping carries; the bound is exact on this FC (one clipped class per sample), and the
        # comparison read A's values on XNNPACK while numpy reads the reference kernels: 4e-5 relative apart here
        assert estimate >= sh * (1 - 2e-4)
        assert (lay.diagnosis.cause == "clipping") == (_clip_alarm(lay) and sh >= THRESHOLDS.clip_share), (lay.diagnosis, sh)
    assert planted.diagnosis.cause == "clipping"
    assert fc.diagnosis.cause != "clipping" and (fc.diagnosis.fix is None or fc.diagnosis.fix.edit != "recalibrate")


def test_fixed_output_ops_get_no_range_verdict(diag):
    """A fixed-output op (SOFTMAX: its grid is the spec's) pushed past the clipping alarm gets no
    verdict and no fix, whether its result is the final output (the diag classifier's) or feeds a
    BATCH_MATMUL (the transformer's: a16w8 was proposed there, which the edit refuses; issue 26
    §6, §8); a conv pushed the same way gets recalibrate."""
    from dataclasses import replace

    from inspector.core.compare.diagnosis import diagnose_layer
    from tests.helpers.transformer_fixtures import transformer_path

    def saturating(layer):
        m = replace(layer.metrics, clip_rate=0.05, rmse_over_scale=3.0, mse=1e-6)
        hi = layer.scale[0] * (127 - layer.zero_point[0])
        return replace(layer, metrics=m, isolated=m, float_min=0.0, float_max=3.0 * hi)

    res = _compare(diag["float"], diag["int8"], diag["eval"])
    fm, qm = load_model(diag["float"]), load_model(diag["int8"])
    soft = next(lay for lay in res.layers if lay.op_type == "SOFTMAX")
    d = diagnose_layer(fm, qm, saturating(soft))
    assert d.cause == "none" and d.fix is None and "fixed output grid" in d.evidence
    conv = _layer(res, dx.op_index(diag["int8"], "conv2"))
    assert diagnose_layer(fm, qm, saturating(conv)).fix.edit == "recalibrate"
    tf_f, tf_q = transformer_path(REPO / ".fixture-cache", "float"), transformer_path(REPO / ".fixture-cache", "int8")
    tq = load_model(tf_q)
    op = next(o.index for o in tq.main.ops if o.type == "SOFTMAX")
    assert tq.main.consumers()[tq.main.ops[op].outputs[0]][0].type == "BATCH_MATMUL"
    tres = compare_models(str(tf_f), str(tf_q), CompareOptions(samples=SampleSettings(count=2, seed=0)))
    tsoft = next(lay for lay in tres.layers if lay.op_index == op)
    d = diagnose_layer(load_model(tf_f), tq, saturating(tsoft))
    assert d.cause == "none" and d.fix is None


def test_weight_gain_inherit_and_kernel_thresholds_are_measured(diag):
    """weight_gain_db (with own_excess): no weight layer of the per-tensor MobileNetV2 twin is
    flagged (one predicts 8.7 dB less weight noise, but its error is output rounding: RMSE 0.38
    steps), and none gains 6 dB of isolated SQNR in the converter's per-channel twin; the planted
    depthwise is flagged and gains >= 6. inherit_db: the planted clipping's downstream
    layers sit >= 6 dB below their own SQNR. kernel_lsb: reference kernels vs XNNPACK on a healthy
    twin differ by at most 1 LSB per layer (ordinary), below the 2 LSB a kernel finding needs."""
    from inspector.core.compare.diagnosis import diagnose, weight_channel_gain_db
    from inspector.core.compare.parity_result import ParityOptions
    from inspector.core.compare.runtime_parity import compare_runtimes
    from tests.helpers.surgical_fixtures import cache_paths, npz

    paths = cache_paths(REPO / ".fixture-cache")
    src = npz(REPO / ".fixture-cache", "eval", 16, 2)
    pc = {lay.op_index: lay for lay in _compare(paths["mnv2_float"], paths["mnv2_int8"], src).layers}
    pt = _compare(paths["mnv2_float"], paths["mnv2_int8_per_tensor"], src)
    fm, qm = load_model(paths["mnv2_float"]), load_model(paths["mnv2_int8_per_tensor"])
    checked = 0
    for lay in pt.layers:
        gain = weight_channel_gain_db(fm, qm, lay)
        if gain is None or lay.op_index not in pc:
            continue
        checked += 1
        flagged = gain >= THRESHOLDS.weight_gain_db and lay.isolated.rmse_over_scale >= THRESHOLDS.own_excess
        assert not flagged and lay.diagnosis.cause != "weight_channels"
        assert pc[lay.op_index].isolated.sqnr_db - lay.isolated.sqnr_db < 6.0  # per-channel scales would not give 6 dB
    assert checked >= 20
    path, op = diag["plants"]["weight_channels"]
    planted = _layer(_compare(diag["float"], path, diag["eval"]), op)
    healthy = _layer(_compare(diag["float"], diag["int8"], diag["eval"]), op)
    assert weight_channel_gain_db(load_model(diag["float"]), load_model(path), planted) >= THRESHOLDS.weight_gain_db
    assert healthy.isolated.sqnr_db - planted.isolated.sqnr_db >= 6.0

    path, op = diag["plants"]["clipping"]
    res = _compare(diag["float"], path, diag["eval"])
    down = [lay for lay in res.layers if lay.op_index > op and lay.op_type != "SOFTMAX"]
    assert down and all(lay.isolated.sqnr_db - lay.metrics.sqnr_db >= THRESHOLDS.inherit_db for lay in down)

    parity = compare_runtimes(str(diag["int8"]), ParityOptions(samples=SampleSettings(count=8, source=str(diag["eval"]))))
    assert parity.layers and max(p.max_lsb or 0 for p in parity.layers) < THRESHOLDS.kernel_lsb
    healthy_res = _compare(diag["float"], diag["int8"], diag["eval"])
    assert all(d.cause != "kernel" for d in diagnose(load_model(diag["float"]), load_model(diag["int8"]), healthy_res.layers, parity).values())


def test_without_isolated_error_inherited_error_is_not_blamed_on_a_layer(diag):
    """Accumulated error only: the planted clipping is still found (float values vs B's range),
    but the layers downstream, whose accumulated RMSE is 8-9 steps of inherited error, get no
    weight or bias cause of their own; `none` says what would tell."""
    path, op = diag["plants"]["clipping"]
    res = _compare(diag["float"], path, diag["eval"], isolated=False)
    assert _layer(res, op).diagnosis.cause == "clipping"
    down = [lay for lay in res.layers if lay.op_index > op]
    assert any(lay.metrics.rmse_over_scale >= THRESHOLDS.own_excess and lay.op_type == "FULLY_CONNECTED" for lay in down)
    for lay in down:
        assert lay.diagnosis.cause == "none" and "isolated" in lay.diagnosis.evidence


def test_weight_sqnr_of_big_weights_reads_a_subset_of_rows(diag, monkeypatch):
    """Weights beyond WEIGHT_SAMPLE elements are measured on evenly spread whole channels: the
    figure stays within 1 dB of the full computation (numpy here, on every weight)."""
    import inspector.core.compare.diagnosis_figures as dg

    path, op = diag["plants"]["weight_rounding"]
    fm, qm = load_model(diag["float"]), load_model(path)
    lay = _layer(_compare(diag["float"], path, diag["eval"]), op)
    qop, fop = qm.main.ops[op], fm.main.ops[lay.float_op_index]
    qt = qm.main.tensors[qop.inputs[1]]
    wq, w = qm.tensor_data(qt).astype(np.float64), fm.tensor_data(fm.main.tensors[fop.inputs[1]]).astype(np.float64)
    s = np.asarray(qt.quantization.scales).reshape(-1, *([1] * (w.ndim - 1)))
    full = 10 * math.log10(np.sum(w**2) / np.sum((w - wq * s) ** 2))
    assert dg.weight_sqnr_db(fm, qm, lay) == pytest.approx(full, abs=1e-6)
    monkeypatch.setattr(dg, "WEIGHT_SAMPLE", w.size // 3)
    assert dg.weight_sqnr_db(fm, qm, lay) == pytest.approx(full, abs=1.0)
