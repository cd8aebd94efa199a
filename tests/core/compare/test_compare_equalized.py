"""Comparing model A with a model B whose pair was equalized (`compare/equalized.py`).

The planted outlier fixture (`tests/helpers/equalize_fixtures.py`: conv2's channel 3 ×60, conv3's
matching input weights ÷60) is equalized (op 2 with op 3). B's op 2 output then stands for A's ÷ s
per channel, and both ops' weights differ from A's by the factors. The edit records s in B's
metadata (`tflite_inspector.equalize`), and the comparison takes A's reference like for like.
Checked against independent computations: s from A's weights in numpy and the record read with
the `tflite` package; P's accumulated SQNR against numpy on `experimental_preserve_all_tensors`
tensors (A's output ÷ s vs B's dequantized output); C's isolated SQNR against a numpy convolution
(A's C weights × s on B's dequantized input vs B's C output); the weight figures against numpy.
A plain comparison with the unequalized B is checked against numpy on A's values as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.compare.comparison import compare_models
from inspector.core.compare.options import CompareOptions
from inspector.core.compare.pair_check import check_pair_files
from inspector.core.compare.pairing import pair_models
from inspector.core.compare.weights import analyze_tensors
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.equalize_fixtures import CHANNEL, K, cache_paths, samples_npz
from tests.helpers.fixture_models import representative_images
from tests.helpers.paths import REPO
from tests.helpers.reference import preserving_interpreter, sqnr_db

CNN = (24, 24, 3)
N, SEED = 48, 3  # the samples the edit calibrates on (as in test_surgical_equalize)
P, C = 2, 3  # conv2 (planted) and conv3, B's op indices
COUNT = 16  # samples compared
METADATA_NAME = "tflite_inspector.equalize"  # the record the edit leaves in B (the contract)


@pytest.fixture(scope="module")
def eq(tmp_path_factory) -> SimpleNamespace:
    root = REPO / ".fixture-cache"
    paths = cache_paths(root)
    npz = samples_npz(root, "cnn", N, SEED)
    f, q = paths["eq_cnn_float"], paths["eq_cnn_int8"]
    r = apply_plan(str(f), str(q), SurgicalPlan((Edit("equalize", f"op:{P}"),), samples=SampleSettings(count=N, source=str(npz))))
    e = tmp_path_factory.mktemp("equalized") / "eq_cnn_equalized.tflite"
    e.write_bytes(r.model_bytes)
    opts = CompareOptions(samples=SampleSettings(count=COUNT, source=str(npz)), isolated=True, runtime="reference")
    return SimpleNamespace(f=f, q=q, e=e, npz=npz, opts=opts, images=representative_images(N, SEED, CNN)[:COUNT],
                           equalized=compare_models(str(f), str(e), opts), plain=compare_models(str(f), str(q), opts))  # fmt: skip


# ---- independent references ---------------------------------------------------------------------
def _metadata(path: Path) -> dict[str, bytes]:
    """Metadata entries (name -> bytes), read with the `tflite` package."""
    import tflite

    data = path.read_bytes()
    m = tflite.Model.GetRootAsModel(data, 0)
    out = {}
    for i in range(m.MetadataLength()):
        md = m.Metadata(i)
        out[md.Name().decode()] = m.Buffers(md.Buffer()).DataAsNumpy().tobytes()
    return out


def _numpy_scales(fm, pairing) -> np.ndarray:
    """s from A's weights: r1 = max|w| of conv2 per output channel, r2 = max|w| of conv3 per input channel."""
    wp = fm.tensor_data(fm.main.tensors[fm.main.ops[pairing.float_op_for(P)].inputs[1]]).astype(np.float64)
    wc = fm.tensor_data(fm.main.tensors[fm.main.ops[pairing.float_op_for(C)].inputs[1]]).astype(np.float64)
    r1, r2 = np.abs(wp).max(axis=(1, 2, 3)), np.abs(wc).max(axis=(0, 1, 2))
    return np.sqrt(r1 * r2) / r2


def _run(path: Path, images: np.ndarray, wanted: list[int]) -> dict[int, np.ndarray]:
    """{tensor: values over the images, float64, dequantized where int8} on the reference kernels."""
    it = preserving_interpreter(path)
    inp = it.get_input_details()[0]
    details = {d["index"]: d for d in it.get_tensor_details()}
    got: dict[int, list[np.ndarray]] = {t: [] for t in wanted}
    for x in images:
        v = x[None].astype(np.float32)
        if inp["dtype"] == np.int8:
            s, z = inp["quantization"]
            v = np.clip(np.round(v / s + z), -128, 127).astype(np.int8)
        it.set_tensor(inp["index"], v)
        it.invoke()
        for t in wanted:
            raw = it.get_tensor(t)
            if raw.dtype == np.int8:
                s, z = details[t]["quantization"]
                got[t].append((raw.astype(np.float64) - z) * s)
            else:
                got[t].append(raw.astype(np.float64))
    return {t: np.concatenate(v) for t, v in got.items()}


def _conv_same(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """TFLite CONV_2D (NHWC input, OHWI weights), stride 1, SAME padding, in float64."""
    kh, kw = w.shape[1:3]
    ph, pw = (kh - 1) // 2, (kw - 1) // 2
    xp = np.pad(x, ((0, 0), (ph, kh - 1 - ph), (pw, kw - 1 - pw), (0, 0)))
    out = np.zeros(x.shape[:3] + (w.shape[0],))
    for i in range(kh):
        for j in range(kw):
            out += xp[:, i : i + x.shape[1], j : j + x.shape[2], :] @ w[:, i, j, :].T
    return out + b


def _layer(result, op: int):
    return next(lay for lay in result.layers if lay.op_index == op)


# ---- the record in the model file ---------------------------------------------------------------
def test_the_edit_records_its_pair_in_the_model_metadata(eq):
    before, after = _metadata(Path(eq.q)), _metadata(eq.e)
    assert set(after) - set(before) == {METADATA_NAME} and all(after[k] == v for k, v in before.items())
    d = json.loads(after[METADATA_NAME])
    fm, qm = load_model(eq.f), load_model(eq.q)
    (rec,) = d["pairs"]
    t = qm.main.ops[P].outputs[0]
    assert d["version"] == 1 and d["subgraph"] == 0
    assert (rec["producer"], rec["consumer"], rec["tensor"], rec["tensor_name"]) == (P, C, t, qm.main.tensors[t].name)
    assert (rec["producer_type"], rec["consumer_type"]) == ("CONV_2D", "CONV_2D")
    s = _numpy_scales(fm, pair_models(fm, qm))
    np.testing.assert_allclose(rec["scales"], s, rtol=1e-9)
    assert int(np.argmax(s)) == CHANNEL and s[CHANNEL] > K / 4


# ---- the accumulated comparison -----------------------------------------------------------------
def test_producer_sqnr_is_against_a_rescaled_by_s(eq):
    fm, em = load_model(eq.f), load_model(eq.e)
    pairing = pair_models(fm, em)
    t_b = em.main.ops[P].outputs[0]
    t_a = pairing.float_for_quant(t_b)
    s = _numpy_scales(fm, pairing)
    x = _run(Path(eq.f), eq.images, [t_a])[t_a] / s  # A's P output ÷ s per channel (last axis)
    y = _run(eq.e, eq.images, [t_b])[t_b]
    lay = _layer(eq.equalized, P)
    assert eq.equalized.samples == COUNT
    assert lay.metrics.sqnr_db == pytest.approx(sqnr_db(x, y), abs=0.01)
    assert lay.metrics.sqnr_db > 35  # was 0.4 dB against A's values as they are
    per = [sqnr_db(x[..., c], y[..., c]) for c in range(x.shape[-1])]  # the per-channel view, channel by channel
    np.testing.assert_allclose(lay.metrics.per_channel_sqnr_db, per, atol=0.01)
    assert lay.metrics.clip_rate < 1e-4 and lay.diagnosis.cause != "clipping"
    assert f"reference rescaled: A's op {P} output ÷ s per channel" in lay.diagnosis.evidence
    # the output (after C, where the factors cancel) is compared as before
    assert _layer(eq.equalized, C).metrics.sqnr_db > 30 and "× s per input channel" in _layer(eq.equalized, C).diagnosis.evidence


def test_pair_check_finds_no_edited_weights(eq):
    for check in (eq.equalized.pair_check, check_pair_files(eq.f, eq.e)):
        assert check.related and check.reasons == () and check.disagreeing_ops == () and check.tensors_disagreeing == 0
        assert check.max_step_error is not None and check.max_step_error <= 0.51  # rounding only, P and C included


def test_consumer_isolated_error_runs_c_on_b_scale_inputs(eq):
    fm, em = load_model(eq.f), load_model(eq.e)
    pairing = pair_models(fm, em)
    fc = fm.main.ops[pairing.float_op_for(C)]
    assert fc.type == "CONV_2D" and str(fc.options.get("fused_activation_function")) == "RELU"
    w = fm.tensor_data(fm.main.tensors[fc.inputs[1]]).astype(np.float64)
    b = fm.tensor_data(fm.main.tensors[fc.inputs[2]]).astype(np.float64)
    s = _numpy_scales(fm, pairing)
    t_in, t_out = em.main.ops[C].inputs[0], em.main.ops[C].outputs[0]
    got = _run(eq.e, eq.images, [t_in, t_out])
    x = np.maximum(_conv_same(got[t_in], w * s[None, None, None, :], b), 0.0)  # equalized C on B's input
    lay = _layer(eq.equalized, C)
    assert lay.isolated.sqnr_db == pytest.approx(sqnr_db(x, got[t_out]), abs=0.01)
    assert lay.isolated.sqnr_db > 35  # A's own C on B-scale inputs read about 19 dB
    assert lay.diagnosis.cause not in ("weight_rounding", "bias_shift", "clipping")
    # P's own error too: A's P with its weights and bias ÷ s, fed B's input
    assert _layer(eq.equalized, P).isolated.sqnr_db > 35


def test_weight_views_compare_like_for_like(eq):
    fm, em = load_model(eq.f), load_model(eq.e)
    pairing = pair_models(fm, em)
    s = _numpy_scales(fm, pairing)
    for op, rescale in ((P, lambda w: w / s[:, None, None, None]), (C, lambda w: w * s[None, None, None, :])):
        ta, tb = fm.main.tensors[fm.main.ops[pairing.float_op_for(op)].inputs[1]], em.main.tensors[em.main.ops[op].inputs[1]]
        wa = rescale(fm.tensor_data(ta).astype(np.float64))
        q = tb.quantization
        wb = em.tensor_data(tb).astype(np.float64) * np.asarray(q.scales)[:, None, None, None]
        w = analyze_tensors(fm, ta, em, tb)
        assert w.metrics.sqnr_db == pytest.approx(sqnr_db(wa, wb), abs=0.01) and w.metrics.sqnr_db > 35
        assert any("(equalized" in n and f"op {op}" in n for n in w.notes)


# ---- an unequalized B: unchanged ----------------------------------------------------------------
def test_a_plain_comparison_is_unchanged(eq):
    fm, qm = load_model(eq.f), load_model(eq.q)
    pairing = pair_models(fm, qm)
    assert METADATA_NAME not in qm.metadata
    t_b = qm.main.ops[P].outputs[0]
    t_a = pairing.float_for_quant(t_b)
    x, y = _run(Path(eq.f), eq.images, [t_a])[t_a], _run(Path(eq.q), eq.images, [t_b])[t_b]
    lay = _layer(eq.plain, P)
    assert lay.metrics.sqnr_db == pytest.approx(sqnr_db(x, y), abs=0.01)
    assert not any("reference rescaled" in (la.diagnosis.evidence if la.diagnosis else "") for la in eq.plain.layers)
    assert eq.plain.pair_check.reasons == ()


# ---- a standalone compare of A with the written file --------------------------------------------
def test_cli_compare_reads_the_record_from_the_file(eq, tmp_path, capsys):
    out = tmp_path / "r.json"
    argv = ["compare", str(eq.f), str(eq.e), "--inputs", str(eq.npz), "--samples", str(COUNT), "--runtime", "reference",
            "--isolated", "--json", str(out)]  # fmt: skip
    assert main(argv) == 0
    d = json.loads(out.read_text())
    p = next(layer for layer in d["layers"] if layer["op_index"] == P)
    c = next(layer for layer in d["layers"] if layer["op_index"] == C)
    assert p["metrics"]["sqnr_db"] == pytest.approx(_layer(eq.equalized, P).metrics.sqnr_db, abs=1e-6)
    assert c["isolated"]["sqnr_db"] == pytest.approx(_layer(eq.equalized, C).isolated.sqnr_db, abs=1e-6)
    assert p["diagnosis"]["cause"] != "clipping" and "(equalized" in p["diagnosis"]["evidence"]
    assert d["pair_check"]["reasons"] == [] and d["pair_check"]["disagreeing_ops"] == []
    text = capsys.readouterr().out
    assert f"note: B records an equalization of op {P} with op {C}" in text
    assert main(["compare", str(eq.f), str(eq.q), "--inputs", str(eq.npz), "--samples", "2"]) == 0
    assert "equalization" not in capsys.readouterr().out


# ---- edits of an equalized B start from what B's equalization left ------------------------------
def _output_sqnr(eq, data: bytes) -> float:
    from tests.helpers.reference import output_rows

    return sqnr_db(output_rows(Path(eq.f).read_bytes(), eq.images), output_rows(data, eq.images))


@pytest.mark.parametrize("kind", ["weight_mse", "per_channel", "keep_float"])
def test_an_edit_of_the_equalized_consumer_keeps_the_function(eq, kind):
    """C's float weights come × s (its input is B's equalized P output): taken from A as they are,
    C's channel 3 would read its input 60× too small and the output would fall apart."""
    base = _output_sqnr(eq, eq.e.read_bytes())
    r = apply_plan(str(eq.f), str(eq.e), SurgicalPlan((Edit(kind, f"op:{C}"),), samples=SampleSettings(count=N, source=str(eq.npz))))
    assert _output_sqnr(eq, r.model_bytes) > base - 1.0 > 25.0


def test_equalizing_an_equalized_pair_again_changes_nothing(eq, tmp_path):
    r = apply_plan(str(eq.f), str(eq.e), SurgicalPlan((Edit("equalize", f"op:{P}"),), samples=SampleSettings(count=N, source=str(eq.npz))))
    again = tmp_path / "again.tflite"
    again.write_bytes(r.model_bytes)
    first, second = load_model(eq.e), load_model(again)
    for op in (P, C):
        for pos in (1, 2):
            a, b = (m.main.tensors[m.main.ops[op].inputs[pos]] for m in (first, second))
            assert np.abs(first.tensor_data(a).astype(np.int64) - second.tensor_data(b).astype(np.int64)).max() <= 1
            np.testing.assert_allclose(a.quantization.scales, b.quantization.scales, rtol=1e-5)
    rec1, rec2 = (json.loads(_metadata(p)[METADATA_NAME])["pairs"] for p in (eq.e, again))
    assert [(r["producer"], r["consumer"]) for r in rec2] == [(P, C)]
    np.testing.assert_allclose(rec2[0]["scales"], rec1[0]["scales"], rtol=1e-5)


def test_seeded_ranges_leave_out_the_equalized_output(eq):
    """--calibrate-from B: B's range of P's output stands for A's ÷ s, so it seeds nothing (A's
    own range there is up to s times larger); the unequalized B seeds it."""
    from inspector.core.requantize.seeded_ranges import seeds_from

    fm, em, qm = load_model(eq.f), load_model(eq.e), load_model(eq.q)
    name = fm.main.tensors[pair_models(fm, em).float_for_quant(em.main.ops[P].outputs[0])].name
    assert name in seeds_from(fm, qm).ranges
    seeds = seeds_from(fm, em)
    assert name not in seeds.ranges and name in seeds.unpaired
    others = set(seeds_from(fm, qm).ranges) - {name}
    assert others <= set(seeds.ranges)


def test_chained_pairs_with_a_depthwise_op_compare_like_for_like(eq, tmp_path):
    """conv2 -> conv3 -> depthwise -> conv4 equalized in a chain (op 3 is C of one pair and P of the
    next, the depthwise op too): every producer's output against A's ÷ its own s (numpy), and the
    pair check sees rounding only."""
    pairs = [(2, 3), (3, 4), (4, 5)]
    plan = SurgicalPlan(tuple(Edit("equalize", f"op:{p}") for p, _ in pairs), samples=SampleSettings(count=N, source=str(eq.npz)))
    path = tmp_path / "chain.tflite"
    path.write_bytes(apply_plan(str(eq.f), str(eq.q), plan).model_bytes)
    rec = json.loads(_metadata(path)[METADATA_NAME])["pairs"]
    assert [(r["producer"], r["consumer"]) for r in rec] == pairs
    res = compare_models(str(eq.f), str(path), eq.opts)
    fm, cm = load_model(eq.f), load_model(path)
    pairing = pair_models(fm, cm)
    for r in rec:
        t_b = cm.main.ops[r["producer"]].outputs[0]
        t_a = pairing.float_for_quant(t_b)
        x = _run(Path(eq.f), eq.images, [t_a])[t_a] / np.asarray(r["scales"])
        lay = _layer(res, r["producer"])
        assert lay.metrics.sqnr_db == pytest.approx(sqnr_db(x, _run(path, eq.images, [t_b])[t_b]), abs=0.01)
        assert lay.metrics.sqnr_db > 30 and lay.isolated.sqnr_db > 30 and lay.diagnosis.cause != "clipping"
    assert _layer(res, 5).isolated.sqnr_db > 30
    assert res.pair_check.reasons == () and res.pair_check.max_step_error <= 0.51


def test_fully_connected_pair(tmp_path):
    """The Dense plant (FULLY_CONNECTED -> FULLY_CONNECTED: C's input channel is its weights'
    dimension 1): P's output against A's ÷ s (numpy) and C's own error sane."""
    from tests.helpers.equalize_fixtures import fc_vectors

    root = REPO / ".fixture-cache"
    paths = cache_paths(root)
    npz = samples_npz(root, "fc", N, SEED)
    f, q = paths["eq_fc_float"], paths["eq_fc_int8"]
    e = tmp_path / "fc_equalized.tflite"
    e.write_bytes(apply_plan(str(f), str(q), SurgicalPlan((Edit("equalize", f"op:{P}"),), samples=SampleSettings(count=N, source=str(npz)))).model_bytes)
    opts = CompareOptions(samples=SampleSettings(count=COUNT, source=str(npz)), isolated=True, runtime="reference")
    res = compare_models(str(f), str(e), opts)
    fm, em = load_model(f), load_model(e)
    pairing = pair_models(fm, em)
    s = np.asarray(json.loads(_metadata(e)[METADATA_NAME])["pairs"][0]["scales"])
    t_b = em.main.ops[P].outputs[0]
    t_a = pairing.float_for_quant(t_b)
    x = fc_vectors(N, SEED)[:COUNT]
    ref = _run(Path(f), x, [t_a])[t_a] / s
    lay = _layer(res, P)
    assert lay.metrics.sqnr_db == pytest.approx(sqnr_db(ref, _run(e, x, [t_b])[t_b]), abs=0.01) and lay.metrics.sqnr_db > 30
    assert _layer(res, C).isolated.sqnr_db > 30 and res.pair_check.reasons == ()
