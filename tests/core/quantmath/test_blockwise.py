"""Blockwise int4 weights (litert-quantizer BLOCKWISE_32) and int4 / int2 per-channel weights, read,
dequantized, shown, audited and compared on a small converter-built transformer.

The references are independent: the LiteRT schema's object API (`schema_py_generated`) for the
flatbuffer, plain numpy bit unpacking for the stored integers, the float model's own weights, and
a plain interpreter with `experimental_preserve_all_tensors=True` for the activations.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.tools import flatbuffer_utils as fu

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.weights import analyze_tensors, weight_tensor_of
from inspector.core.quantmath.blockwise import (
    BlockwiseError,
    blockwise_params,
    dequantize_blockwise,
)
from inspector.core.quantmath.opmath import op_math
from inspector.core.quantmath.quant import dequantize
from inspector.core.review.audit import audit_model
from inspector.core.review.model_summary import model_summary_json
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.transformer_fixtures import SEQ, token_samples, transformer_path

REPO = Path(__file__).resolve().parents[3]
REL = 1e-5


@pytest.fixture(scope="module")
def tpath():
    return lambda name: transformer_path(REPO / ".fixture-cache", name)


def _object_model(path: Path) -> schema.ModelT:
    return schema.ModelT.InitFromObj(schema.Model.GetRootAs(path.read_bytes(), 0))


def _buffer(m: schema.ModelT, t: schema.TensorT) -> np.ndarray:
    return np.asarray(m.buffers[t.buffer].data, np.uint8)


def _unpack(raw: np.ndarray, bits: int) -> np.ndarray:
    """Signed sub-byte values, low bits first (independent of the reader's implementation)."""
    vals = [(int(b) >> (k * bits)) & ((1 << bits) - 1) for b in raw.tolist() for k in range(8 // bits)]
    half = 1 << (bits - 1)
    return np.array([v - (1 << bits) if v >= half else v for v in vals], np.int64)


def _blockwise_tensors(m: schema.ModelT) -> dict[int, schema.BlockwiseQuantizationT]:
    sg = m.subgraphs[0]
    return {
        i: t.quantization.details
        for i, t in enumerate(sg.tensors)
        if t.quantization is not None and t.quantization.detailsType == schema.QuantizationDetails.BlockwiseQuantization
    }


# ------------------------------------------------------------------ reading
def test_blockwise_model_opens_and_matches_an_independent_parse(tpath):
    path = tpath("int4_b32")
    ours = Model(path)
    ref = _object_model(path)
    found = _blockwise_tensors(ref)
    n_fc = sum(1 for op in ours.main.ops if op.type == "FULLY_CONNECTED")
    assert len(found) == n_fc == 13  # every FC weight, nothing else
    sg = ref.subgraphs[0]
    for ti, d in found.items():
        t = ours.main.tensors[ti]
        assert t.dtype == "int4" and t.quantization is not None and t.quantization.blockwise is not None
        bw = t.quantization.blockwise
        assert (bw.block_size, bw.scale_tensor, bw.zero_point_tensor) == (d.blockSize, d.scales, d.zeroPoints)
        st = sg.tensors[d.scales]
        assert st.type == schema.TensorType.FLOAT16
        want_scales = _buffer(ref, st).view(np.float16).astype(np.float64).reshape(list(st.shape))
        p = blockwise_params(ours, t)
        n_out, n_in = (int(v) for v in sg.tensors[ti].shape)
        assert p.block_size == 32 and p.blocks_per_row == n_in // d.blockSize
        assert p.num_blocks == n_out * (n_in // d.blockSize) == want_scales.size
        np.testing.assert_array_equal(p.scales, want_scales)
        assert p.zero_points is None  # litert-quantizer writes symmetric blocks (zero_points = -1)
        assert p.scale_range == (want_scales.min(), want_scales.max())


def test_blockwise_weights_dequantize_per_block(tpath):
    path = tpath("int4_b32")
    ours, ref = Model(path), _object_model(path)
    fm = Model(tpath("float"))
    sg = ref.subgraphs[0]
    for ti, d in _blockwise_tensors(ref).items():
        t = sg.tensors[ti]
        shape = [int(v) for v in t.shape]
        q = _unpack(_buffer(ref, t), 4)[: math.prod(shape)].reshape(shape)
        s = _buffer(ref, sg.tensors[d.scales]).view(np.float16).astype(np.float64).reshape(shape[0], -1)
        want = q * np.repeat(s, d.blockSize, axis=1)
        mt = ours.main.tensors[ti]
        np.testing.assert_array_equal(ours.tensor_data(mt), q)
        got = dequantize_blockwise(ours.tensor_data(mt), blockwise_params(ours, mt))
        np.testing.assert_array_equal(got, want)
        # Against the float model's weights: every value within about half its own block's step
        # (the stored scales are rounded to bfloat16 precision, hence the margin).
        wf = fm.tensor_data(fm.main.tensor_by_name(mt.name)).astype(np.float64)
        assert np.max(np.abs(wf - want) / np.repeat(s, d.blockSize, axis=1)) < 0.55


@pytest.mark.parametrize("name, bits", [("int4_channel", 4), ("int2_channel", 2)])
def test_per_channel_int4_and_int2_weights(tpath, name, bits):
    path = tpath(name)
    ours, ref = Model(path), _object_model(path)
    fm = Model(tpath("float"))
    sg = ref.subgraphs[0]
    checked = 0
    for ti, t in enumerate(sg.tensors):
        if t.type != (schema.TensorType.INT4 if bits == 4 else schema.TensorType.INT2):
            continue
        shape = [int(v) for v in t.shape]
        q = _unpack(_buffer(ref, t), bits)[: math.prod(shape)].reshape(shape)
        mt = ours.main.tensors[ti]
        assert mt.dtype == f"int{bits}"
        np.testing.assert_array_equal(ours.tensor_data(mt), q)
        s = np.asarray(t.quantization.scale, np.float64)
        assert mt.quantization.quantized_dimension == t.quantization.quantizedDimension == 0
        np.testing.assert_array_equal(dequantize(ours.tensor_data(mt), mt.quantization), q * s[:, None])
        wf = fm.tensor_data(fm.main.tensor_by_name(mt.name)).astype(np.float64)
        lo = -(1 << (bits - 1))
        inside = q > lo  # the negative end can hold clipped values
        assert np.max(np.abs(wf - q * s[:, None])[inside] / np.broadcast_to(s[:, None], q.shape)[inside]) <= 0.5 + 1e-4
        checked += 1
    assert checked == 13


def test_info_cli_shows_blockwise(tpath, tmp_path):
    path = tpath("int4_b32")
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(path)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    m = Model(path)
    params = [blockwise_params(m, t) for t in m.main.tensors if t.quantization and t.quantization.blockwise]
    lo, hi = min(p.scale_range[0] for p in params), max(p.scale_range[1] for p in params)
    want = f"blockwise weights: 13 int4 tensors, block size 32, {sum(p.num_blocks for p in params):,} blocks, block scales {lo:.4g}..{hi:.4g}"
    assert want in r.stdout
    out = tmp_path / "info.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(path), "--json", str(out)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    ours = Model(path)
    bws = {t["index"]: t["quantization"]["blockwise"] for t in doc["subgraphs"][0]["tensors"] if t["quantization"] and "blockwise" in t["quantization"]}
    assert len(bws) == 13
    for ti, bw in bws.items():
        p = blockwise_params(ours, ours.main.tensors[ti])
        assert bw["block_size"] == 32 and bw["num_blocks"] == p.num_blocks and bw["scale_range"] == list(p.scale_range)
        assert bw["representable_range"] == [-8 * p.scale_range[1], 7 * p.scale_range[1]]
    assert model_summary_json(ours)["subgraphs"][0]["tensors"][next(iter(bws))]["quantization"]["blockwise"] == bws[next(iter(bws))]


# ------------------------------------------------------------------ planted faults
def _plant(path: Path, out: Path, edit) -> Path:
    m = fu.convert_bytearray_to_object(bytearray(path.read_bytes()))
    edit(m)
    out.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    return out


def _first_blockwise(m: schema.ModelT):
    sg = m.subgraphs[0]
    ti = next(i for i, t in enumerate(sg.tensors) if t.quantization is not None and t.quantization.detailsType == 2)
    return sg, ti, sg.tensors[ti].quantization.details


def test_audit_flags_a_wrong_scale_tensor_shape(tpath, tmp_path):
    path = tpath("int4_b32")

    def reshape_scales(m):  # [64, 2] -> [128, 1]: same bytes, wrong layout
        sg, _, d = _first_blockwise(m)
        st = sg.tensors[d.scales]
        st.shape = np.array([int(st.shape[0]) * int(st.shape[1]), 1], np.int32)

    bad = _plant(path, tmp_path / "bad_scales.tflite", reshape_scales)
    m = Model(bad)
    _, ti, _ = _first_blockwise(_object_model(bad))
    findings = [f for f in audit_model(m) if f.severity == "error"]
    assert [(f.rule, f.tensor_index) for f in findings] == [("blockwise-scale-shape", ti)]
    f = findings[0]
    assert f.op_type == "FULLY_CONNECTED" and f.observed == [128, 1] and f.expected == [64, 2]
    assert not [f for f in audit_model(Model(path)) if f.severity == "error"]
    # The weight view and the op math refuse to dequantize with it rather than guess.
    with pytest.raises(BlockwiseError, match=r"expected \[64, 2\]"):
        blockwise_params(m, m.main.tensors[ti])
    op = next(op for op in m.main.ops if ti in op.inputs)
    assert "do not fit" in " ".join(op_math(m, op.index).explanation)


def test_audit_flags_a_block_size_that_does_not_divide(tpath, tmp_path):
    def odd_block(m):
        _, _, d = _first_blockwise(m)
        d.blockSize = 24

    bad = _plant(tpath("int4_b32"), tmp_path / "bad_block.tflite", odd_block)
    rules = {f.rule for f in audit_model(Model(bad)) if f.severity == "error"}
    assert "blockwise-block-size" in rules


def test_a_scale_tensor_index_out_of_range_is_a_clear_error(tpath, tmp_path):
    def far(m):
        _, _, d = _first_blockwise(m)
        d.scales = 9999

    bad = _plant(tpath("int4_b32"), tmp_path / "far.tflite", far)
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(bad)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(bad) in lines[0] and "scales tensor is 9999" in lines[0]


# ------------------------------------------------------------------ views
def test_weight_view_and_op_math_of_a_blockwise_fc(tpath):
    fm, qm = Model(tpath("float")), Model(tpath("int4_b32"))
    op = next(op for op in qm.main.ops if op.type == "FULLY_CONNECTED")
    tb = qm.main.tensors[weight_tensor_of(qm.main, op)]
    ta = fm.main.tensor_by_name(tb.name)
    w = analyze_tensors(fm, ta, qm, tb)
    x = fm.tensor_data(ta).astype(np.float64)
    y = dequantize_blockwise(qm.tensor_data(tb), blockwise_params(qm, tb))
    e = x - y
    assert w.metrics.sqnr_db == pytest.approx(10 * math.log10(np.sum(x * x) / np.sum(e * e)), rel=1e-9)
    assert w.metrics.max_abs == pytest.approx(np.max(np.abs(e)), rel=1e-12)
    assert int(w.b_counts.sum()) == x.size == int(w.a_counts.sum())
    per = 10 * np.log10(np.sum(x * x, axis=1) / np.sum(e * e, axis=1))
    np.testing.assert_allclose(w.per_channel_sqnr_db, per, rtol=1e-12)
    assert any("blocks of 32" in n for n in w.notes) and w.b.describe() == "B dequantized int4 per block of 32"
    om = op_math(qm, op.index)
    assert om.kernel_path == "hybrid" and om.hybrid is not None and om.hybrid.blockwise is not None
    b = om.hybrid.blockwise
    p = blockwise_params(qm, tb)
    assert (b.block_size, b.num_blocks, b.blocks_per_row) == (32, p.num_blocks, p.blocks_per_row)
    np.testing.assert_array_equal(b.row_scale_max, p.scales.max(axis=1))
    text = " ".join(om.explanation)
    assert "B = 32" in text and "quantizes each row" in text and "no output scale S3" in text
    wq = om.tensor("weights")
    assert wq is not None and wq.block_size == 32 and wq.range_lo == (-8 * p.scale_range[1],)
    json.dumps(om.to_json())


def test_blockwise_weight_view_in_chunks_and_subsampled(tpath, monkeypatch):
    """Blocks are dequantized chunk by chunk from their flat position: many small chunks and a
    strided subsample give the numbers numpy gets on the same values."""
    import inspector.core.compare.weights as W

    fm, qm = Model(tpath("float")), Model(tpath("int4_b32"))
    op = [op for op in qm.main.ops if op.type == "FULLY_CONNECTED"][4]  # [256, 64] weights
    tb = qm.main.tensors[weight_tensor_of(qm.main, op)]
    ta = fm.main.tensor_by_name(tb.name)
    x = fm.tensor_data(ta).astype(np.float64)
    y = dequantize_blockwise(qm.tensor_data(tb), blockwise_params(qm, tb))
    monkeypatch.setattr(W, "CHUNK_ELEMENTS", 1000)  # 17 chunks of 1000 values: blocks cut at chunk edges
    full = analyze_tensors(fm, ta, qm, tb)
    e = x - y
    assert full.metrics.mse == pytest.approx(np.mean(e * e), rel=1e-12)
    assert (full.edges[0], full.edges[-1]) == (min(x.min(), y.min()), max(x.max(), y.max()))
    np.testing.assert_array_equal(full.b_counts, np.histogram(y, full.edges)[0])
    np.testing.assert_allclose(full.per_channel_max_abs, np.abs(e).max(axis=1), rtol=0, atol=0)
    sub = analyze_tensors(fm, ta, qm, tb, max_elements=5000)  # about every 4th value, in contiguous blocks
    idx = np.concatenate([np.arange(x.size)[c] for c in W._chunks(x.size, 1, -(-x.size // 5000))])
    assert 4000 < idx.size <= 5000 and np.unique(idx).size == idx.size
    xs, ys = x.ravel()[idx], y.ravel()[idx]
    assert sub.sampled and sub.used_elements == xs.size
    assert sub.metrics.mse == pytest.approx(np.mean((xs - ys) ** 2), rel=1e-12)
    np.testing.assert_array_equal(sub.b_counts, np.histogram(ys, sub.edges)[0])
    rows = idx // x.shape[1]
    sx = np.bincount(rows, xs * xs, minlength=x.shape[0])
    se = np.bincount(rows, (xs - ys) ** 2, minlength=x.shape[0])
    np.testing.assert_allclose(sub.per_channel_sqnr_db, 10 * np.log10(sx / se), rtol=1e-12)


def test_blockwise_weight_view_of_one_output_channel(tpath):
    fm, qm = Model(tpath("float")), Model(tpath("int4_b32"))
    op = [op for op in qm.main.ops if op.type == "FULLY_CONNECTED"][5]  # [64, 256] weights: 8 blocks per row
    tb = qm.main.tensors[weight_tensor_of(qm.main, op)]
    ta = fm.main.tensor_by_name(tb.name)
    p = blockwise_params(qm, tb)
    x = fm.tensor_data(ta).astype(np.float64)[7]
    y = qm.tensor_data(tb)[7].astype(np.float64) * np.repeat(p.scales[7], 32)
    w = analyze_tensors(fm, ta, qm, tb, channel=7)
    assert w.channel == 7 and w.num_channels == 64 and w.total_elements == 256 and w.per_channel_sqnr_db is None
    assert w.metrics.mse == pytest.approx(np.mean((x - y) ** 2), rel=1e-12)
    assert w.metrics.max_abs == pytest.approx(np.max(np.abs(x - y)), rel=1e-12)
    np.testing.assert_array_equal(w.b_counts, np.histogram(y, w.edges)[0])
    np.testing.assert_array_equal(w.a_counts, np.histogram(x, w.edges)[0])
    assert w.notes[0] == "output channel 7 of 64"
    with pytest.raises(ValueError, match="out of range"):
        analyze_tensors(fm, ta, qm, tb, channel=64)


# ------------------------------------------------------------------ comparison
def _preserved(path: Path, tokens: np.ndarray) -> list[dict[int, np.ndarray]]:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
                     experimental_preserve_all_tensors=True)  # fmt: skip
    it.allocate_tensors()
    inp = it.get_input_details()[0]["index"]
    out = []
    for x in tokens:
        it.set_tensor(inp, x)
        it.invoke()
        vals = {}
        for d in it.get_tensor_details():
            try:
                vals[d["index"]] = np.array(it.get_tensor(d["index"]))
            except ValueError:
                continue
        out.append(vals)
    return out


def test_blockwise_compare_mse_per_layer_matches_numpy(tpath, tmp_path):
    tokens = token_samples(3, seed=4)
    npz = tmp_path / "tokens.npz"
    np.savez(npz, tokens=tokens[:, 0])  # samples stacked along the batch axis
    fpath, qpath = tpath("float"), tpath("int4_b32")
    res = compare_models(str(fpath), str(qpath), CompareOptions(samples=SampleSettings(count=None, source=str(npz)), runtime="reference"))
    assert res.samples == 3
    fv, qv = _preserved(fpath, tokens), _preserved(qpath, tokens)
    checked = fcs = 0
    for layer in res.layers:
        if layer.float_tensor not in fv[0] or layer.quant_tensor not in qv[0]:
            continue
        x = np.stack([v[layer.float_tensor] for v in fv]).astype(np.float64)
        y = np.stack([v[layer.quant_tensor] for v in qv]).astype(np.float64)
        if x.dtype.kind != "f" or x.shape != y.shape:
            continue
        mse = float(np.mean((x - y) ** 2))
        assert layer.metrics.mse == pytest.approx(mse, rel=REL, abs=1e-30), (layer.op_index, layer.op_type)
        checked += 1
        fcs += layer.op_type == "FULLY_CONNECTED"
    assert checked >= 80 and fcs == 13
    # a real check: int4 blocks leave a visible error at every FC output
    assert max(layer.metrics.sqnr_db for layer in res.layers if layer.op_type == "FULLY_CONNECTED") < 40


@pytest.mark.parametrize("name", ["int8", "dynamic", "int4_channel"])
def test_other_transformer_versions_compare(tpath, name):
    res = compare_models(str(tpath("float")), str(tpath(name)), CompareOptions(samples=SampleSettings(count=2), runtime="reference"))
    assert res.samples == 2 and len(res.layers) > 60
    out = res.outputs[0].metrics
    assert out.sqnr_db is not None and 5 < out.sqnr_db < 80 and out.max_abs > 0
    assert res.layers[-1].metrics.mse >= 0


def test_token_samples_fit_the_model():
    assert token_samples(2).shape == (2, 1, SEQ)


def test_uint4_weights_read_and_dequantize(tpath, tmp_path):
    """No converter writes uint4 yet: the int4 per-channel model rewritten as uint4 with Z = 8
    must read as q + 8 and dequantize to exactly the int4 values."""
    src = tpath("int4_channel")
    ref = _object_model(src)
    int4 = [i for i, t in enumerate(ref.subgraphs[0].tensors) if t.type == schema.TensorType.INT4]

    def to_uint4(m):
        sg = m.subgraphs[0]
        for i in int4:
            t = sg.tensors[i]
            q = _unpack(_buffer(m, t), 4)[: math.prod(int(v) for v in t.shape)] + 8
            packed = (q[0::2] | (q[1::2] << 4)).astype(np.uint8)
            m.buffers[t.buffer].data = packed
            t.type = schema.TensorType.UINT4
            t.quantization.zeroPoint = np.full(len(t.quantization.scale), 8, np.int64)

    path = _plant(src, tmp_path / "uint4.tflite", to_uint4)
    a, b = Model(src), Model(path)
    assert int4
    for i in int4:
        ta, tb = a.main.tensors[i], b.main.tensors[i]
        assert tb.dtype == "uint4" and set(tb.quantization.zero_points) == {8}
        np.testing.assert_array_equal(b.tensor_data(tb).astype(np.int64), a.tensor_data(ta).astype(np.int64) + 8)
        np.testing.assert_array_equal(dequantize(b.tensor_data(tb), tb.quantization), dequantize(a.tensor_data(ta), ta.quantization))
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(path)], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0 and "uint4" in r.stdout, r.stderr


@pytest.mark.parametrize("name, runtime, asymmetric", [
    ("int4_b32", "AUTO", True), ("int4_b32", "BUILTIN_WITHOUT_DEFAULT_DELEGATES", True),
    ("int4_channel", "AUTO", True), ("int4_channel", "BUILTIN_WITHOUT_DEFAULT_DELEGATES", False),
    ("int2_channel", "BUILTIN_WITHOUT_DEFAULT_DELEGATES", False),
])  # fmt: skip
def test_op_math_describes_what_the_runtime_computes(tpath, name, runtime, asymmetric):
    """The op math says how input rows are quantized at run time (blockwise: asymmetric per row in
    both runtimes; per-channel int4/int2 with asymmetric_quantize_inputs = false: symmetric in the
    builtin kernels, asymmetric on the XNNPACK path). Simulating exactly that reproduces LiteRT's FC
    outputs to float32 rounding, while the other rounding (and the exact float product) is off by
    ~1e-3, so the check can fail."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    path = tpath(name)
    m = Model(path)
    it = Interpreter(model_path=str(path), experimental_op_resolver_type=getattr(OpResolverType, runtime),
                     experimental_preserve_all_tensors=True)  # fmt: skip
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], token_samples(1, seed=9)[0])
    it.invoke()
    fcs = [op for op in m.main.ops if op.type == "FULLY_CONNECTED"]
    text = " ".join(op_math(m, fcs[0].index).explanation)
    if name == "int4_b32":
        assert "quantizes each row" in text and "asymmetric" in text
    else:
        assert "symmetric: S_in = max|x| / 127" in text and "XNNPACK path (the optimized runtime) quantizes each input row asymmetrically" in text
    for op in fcs:
        x = it.get_tensor(op.inputs[0]).astype(np.float64)
        x = x.reshape(-1, x.shape[-1])
        wt = m.main.tensors[op.inputs[1]]
        q = m.tensor_data(wt)
        w = dequantize_blockwise(q, blockwise_params(m, wt)) if wt.quantization.blockwise else dequantize(q, wt.quantization)
        bias = it.get_tensor(op.inputs[2]).astype(np.float64) if len(op.inputs) > 2 and op.inputs[2] >= 0 else 0.0
        y = it.get_tensor(op.outputs[0]).astype(np.float64).reshape(x.shape[0], -1)
        lo, hi = np.minimum(x.min(axis=1, keepdims=True), 0), np.maximum(x.max(axis=1, keepdims=True), 0)
        s = (hi - lo) / 255
        z = np.round(-128 - lo / s)
        x_asym = (np.clip(np.round(x / s) + z, -128, 127) - z) * s
        ss = np.abs(x).max(axis=1, keepdims=True) / 127
        x_sym = np.clip(np.round(x / ss), -127, 127) * ss
        want, other = (x_asym, x_sym) if asymmetric else (x_sym, x_asym)
        scale = np.max(np.abs(y))
        assert np.max(np.abs(want @ w.T + bias - y)) <= 1e-5 * scale, op.index
        assert np.max(np.abs(other @ w.T + bias - y)) > 1e-4 * scale, op.index
        assert np.max(np.abs(x @ w.T + bias - y)) > 1e-4 * scale, op.index


@pytest.mark.parametrize("name", ["int4_b32", "int2_channel"])
def test_requantize_refuses_an_already_quantized_transformer(tpath, tmp_path, name):
    out = tmp_path / "new.tflite"
    r = subprocess.run([sys.executable, "-m", "inspector", "requantize", str(tpath(name)), "--out", str(out)],
                       capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert r.returncode == 2 and "already quantized" in r.stderr and not out.exists()


def test_fuzzed_blockwise_models_are_read_or_rejected_cleanly(tpath, tmp_path):
    """The fuzz corpus mutations (tests/fuzz_mutations.py) on the blockwise model: what `info` does
    either works or raises one clean ModelFormatError, never anything else."""
    from collections import Counter

    from tests.helpers.fuzz_mutations import KINDS, SeedModel, exercise, mutate

    seed = SeedModel.load("int4_b32", tpath("int4_b32"))
    outcomes: Counter = Counter()
    for ki, kind in enumerate(KINDS):
        for c in range(25):
            p = tmp_path / f"{kind}-{c}.tflite"
            p.write_bytes(mutate(seed, kind, np.random.default_rng(ki * 1000 + c), [seed]))
            outcomes[exercise(p)] += 1
    assert outcomes["ok"] + outcomes["rejected"] == 8 * 25 and outcomes["rejected"] > 20


def test_a_nan_block_scale_is_reported_not_shown(tpath, tmp_path):
    def nan_scale(m):
        sg, _, d = _first_blockwise(m)
        st = sg.tensors[d.scales]
        vals = _buffer(m, st).view(np.float16).copy()
        vals[3] = np.nan
        m.buffers[st.buffer].data = vals.view(np.uint8)

    bad = _plant(tpath("int4_b32"), tmp_path / "nan.tflite", nan_scale)
    m = Model(bad)
    _, ti, _ = _first_blockwise(_object_model(bad))
    (f,) = [f for f in audit_model(m) if f.severity == "error"]
    assert (f.rule, f.tensor_index, f.observed) == ("blockwise-scale-values", ti, 1)
    doc = model_summary_json(m)  # strict JSON: no NaN leaks into info --json
    json.dumps(doc, allow_nan=False)
    assert "1 negative or non-finite" in doc["subgraphs"][0]["tensors"][ti]["quantization"]["blockwise"]["problem"]
