"""Core data behind the comparison views: one-sample re-runs, activation histograms on the
quantization grid (clipped mass), the layer series (infinite SQNR, log floors), keep plans."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.result import KeptValues, LayerResult
from inspector.core.compare.single_sample import compare_one_sample
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats.metrics import compute_metrics
from inspector.core.tflite.model import Model
from inspector.core.viewdata.activations import activation_histogram, keep_plan
from inspector.core.viewdata.layer_series import error_grade, exact_sqnr_position, layer_series


def _sqnr(result):
    return [lay.metrics.sqnr_db for lay in result.layers]


@pytest.mark.parametrize("index", [0, 5])
def test_one_sample_equals_that_sample_of_the_run(cnn_pair, tmp_path, index):
    fa, fb = (str(p) for p in cnn_pair)
    opts = CompareOptions(samples=SampleSettings(count=6, seed=4))
    one = compare_one_sample(fa, fb, opts, index)
    # Independent: random sample `index` of seed 4 is rng([4, index]) uniform over the int8 input range.
    q = Model(fb).main
    inp = q.tensors[q.ops[0].outputs[0]] if q.ops[0].type == "QUANTIZE" else q.tensors[q.inputs[0]]
    s, z = inp.quantization.scales[0], inp.quantization.zero_points[0]
    x = np.random.default_rng([4, index]).uniform(s * (-128 - z), s * (127 - z), (1, 32, 32, 3)).astype(np.float32)
    np.savez(tmp_path / "x.npz", image=x)
    ref = compare_models(fa, fb, CompareOptions(samples=SampleSettings(source=str(tmp_path / "x.npz"))))
    assert one.samples == 1 and one.sources == (f"random #{index} (seed 4)",) and f"sample #{index}" in one.inputs
    np.testing.assert_allclose(_sqnr(one), _sqnr(ref), rtol=1e-9)
    assert _sqnr(one) != _sqnr(compare_one_sample(fa, fb, opts, 1 - index // 5))


def test_one_sample_out_of_range_is_a_clear_error(example_pair):
    from inspector.core.errors import InputError

    with pytest.raises(InputError, match="no sample #9: the inputs hold 3 samples"):
        compare_one_sample(str(example_pair[0]), str(example_pair[1]), CompareOptions(samples=SampleSettings(count=3)), 9)


def _layer(scale, zp, dtype="int8", sqnr=30.0):
    m = compute_metrics(np.ones(4), np.ones(4) * 0.99)
    return LayerResult(0, "CONV_2D", "t", 1, 2, "name", m, dtype=dtype, shape=(4,), scale=scale, zero_point=zp)


def test_histogram_bins_follow_the_grid_and_count_clipped_mass():
    s, zp = 0.05, -10
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, 5000)
    y = (np.clip(np.round(x / s) + zp, -128, 127) - zp) * s  # what an int8 tensor holds
    h = activation_histogram(_layer((s,), (zp,)), KeptValues(x.astype(np.float32), y.astype(np.float32), 10_000))
    steps = h.edges / s + zp + 0.5
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-6)
    assert len(h.edges) - 1 <= 120 and h.steps_per_bin == math.ceil((np.round(x.max() / s) - np.round(x.min() / s) + 1) / 120)
    np.testing.assert_array_equal(h.float_counts, np.histogram(np.float32(x), h.edges)[0])
    np.testing.assert_array_equal(h.quant_counts, np.histogram(np.float32(y), h.edges)[0])
    lo, hi = s * (-128 - zp), s * (127 - zp)
    assert (h.rep_lo, h.rep_hi) == pytest.approx((lo, hi))
    x32 = np.float32(x)
    assert h.clipped_low == pytest.approx(np.mean(x32 < lo - s / 2)) and h.clipped_high == pytest.approx(np.mean(x32 > hi + s / 2))
    assert 0.01 < h.clipped < 0.5 and h.used == 5000 and h.total == 10_000
    assert len(h.scatter_x) == 2000 and np.all(np.isin(h.scatter_x, x32))
    f = activation_histogram(_layer(None, None, dtype="float32"), KeptValues(x32, x32, 5000))
    assert f.rep_lo is None and f.clipped == 0 and len(f.edges) == 101 and f.steps_per_bin is None


def test_layer_series_draws_infinite_and_zero_values(cnn_pair):
    r = compare_models(str(cnn_pair[0]), str(cnn_pair[1]), CompareOptions(samples=SampleSettings(count=2)))
    s = layer_series(r, "sqnr_db")
    raw = np.array([lay.metrics.sqnr_db for lay in r.layers])
    inf = np.isinf(raw)
    assert inf.any() and np.all(np.isfinite(s.values))
    top = exact_sqnr_position(r)
    assert top % 10 == 0 and raw[~inf].max() + 10 <= top < raw[~inf].max() + 20
    assert np.all(s.values[inf] == top)
    # here every ∞ is an integer shape op (SHAPE, STRIDED_SLICE, PACK): noted and not drawn on the curve
    shape = np.array(s.shape_only)
    assert np.array_equal(shape, inf) and not s.drawn()[inf].any() and s.drawn()[~inf].all()
    assert all("shape op" in n for n, i in zip(s.notes, inf, strict=True) if i)
    m = layer_series(r, "mse")
    mse = np.array([lay.metrics.mse for lay in r.layers])
    assert np.all(m.values[mse > 0] == mse[mse > 0]) and np.all(m.values[mse == 0] == mse[mse > 0].min() / 10)
    assert [error_grade(v) for v in (40, 30, 20, 10, 0, None)] == [0.0, 0.0, 0.5, 1.0, 1.0, None]


def test_keep_plan_all_layers_within_budget(example_pair):
    q = Model(example_pair[1])
    assert keep_plan(q) == frozenset(range(len(q.main.tensors)))
    assert keep_plan(q, selected=7, budget=10) == frozenset({*q.main.outputs, 7})


def test_the_op_holding_the_input_range_draws_its_own_error(example_pair):
    """The bundled example's op 1 RESHAPE holds the model input's range (diagnosed input_range):
    its isolated run is fed B's input as B's QUANTIZE clipped it, so it read ∞ and the own-error
    curve drew the root cause at the top. Its own error on the plot is its accumulated SQNR,
    checked here against numpy on LiteRT's preserved tensors."""
    from ai_edge_litert.interpreter import Interpreter

    from inspector.paths import example_inputs

    fa, fb = (str(p) for p in example_pair)
    result = compare_models(fa, fb, CompareOptions(samples=SampleSettings(count=24, source=str(example_inputs()))))
    k = next(i for i, lay in enumerate(result.layers) if lay.op_index == 1)
    layer = result.layers[k]
    assert layer.diagnosis.cause == "input_range" and math.isinf(layer.isolated.sqnr_db)
    own = layer_series(result, "sqnr_db", isolated=True)
    assert own.raw[k] == layer.metrics.sqnr_db and "input's range" in own.notes[k]
    assert all(own.raw[i] == lay.isolated.sqnr_db for i, lay in enumerate(result.layers) if i != k)
    with np.load(example_inputs()) as z:
        images = next(z[n] for n in z.files if z[n].dtype == np.float32)[:24]
    its = []
    for p in (fa, fb):
        it = Interpreter(model_path=p, experimental_preserve_all_tensors=True)
        it.allocate_tensors()
        its.append(it)
    sig = err = 0.0
    for img in images:
        outs = []
        for it, t in zip(its, (layer.float_tensor, layer.quant_tensor), strict=True):
            inp = it.get_input_details()[0]
            it.set_tensor(inp["index"], img.reshape(inp["shape"]).astype(np.float32))
            it.invoke()
            v = it.get_tensor(t).astype(np.float64)
            d = it.get_tensor_details()[t]["quantization_parameters"]
            if len(d["scales"]):
                v = (v - d["zero_points"][0]) * d["scales"][0]
            outs.append(v)
        sig += float(np.sum(outs[0] ** 2))
        err += float(np.sum((outs[0] - outs[1]) ** 2))
    assert own.raw[k] == pytest.approx(10 * np.log10(sig / err), abs=0.01)


def test_the_exact_line_of_several_results_and_the_series_made_in_the_worker(cnn_pair, example_pair):
    """The "∞" line over several results (each one's best kept with it) is the line over all their
    SQNRs, computed here independently; `warm` makes the layer plot's default series in the
    worker, and the plot's call with another name gets that series' arrays."""
    from inspector.core.viewdata.layer_figures import warm

    r1 = compare_models(str(cnn_pair[0]), str(cnn_pair[1]), CompareOptions(samples=SampleSettings(count=2)))
    r2 = compare_models(str(example_pair[0]), str(example_pair[1]), CompareOptions(samples=SampleSettings(count=2)))
    every = [m.sqnr_db for r in (r1, r2) for lay in r.layers for m in (lay.metrics, lay.isolated) if m is not None]
    finite = [v for v in every if math.isfinite(v) and v < 100.0]
    want = 10.0 * math.ceil((max(finite) + 10.0) / 10.0)
    assert exact_sqnr_position(r1, r2) == want == max(exact_sqnr_position(r1), exact_sqnr_position(r2))
    assert exact_sqnr_position(None) == 120.0
    warm(r1)
    top = exact_sqnr_position(r1)
    a = layer_series(r1)
    b = layer_series(r1, name="accumulated (end to end)", exact_at=top)
    assert b.name == "accumulated (end to end)" and b.values is a.values  # made once, in `warm`
    fresh = np.array([top if math.isinf(v) else v for v in _sqnr(r1)])
    assert np.array_equal(b.values, fresh)
