"""a16w8 on a run of B's ops: int16 inside, int64 bias, conversions at the edges only."""

from __future__ import annotations

import numpy as np
import pytest
import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.pairing import pair_models
from inspector.core.errors import InputError
from inspector.core.requantize.surgical import apply_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.fixture_models import representative_images
from tests.helpers.surgical_helpers import (
    assert_untouched,
    describe,
    edited_names,
    op_records,
    run_both,
)

RUN = (1, 2, 3, 4, 5)  # conv, depthwise, conv, add (residual), conv of the small CNN


@pytest.fixture(scope="module")
def edited(fixture_path, tmp_path_factory):
    f, q = fixture_path("float"), fixture_path("int8")
    r = apply_plan(str(f), str(q), SurgicalPlan(tuple(Edit("a16w8", f"op:{i}") for i in RUN), samples=SampleSettings(count=8)))
    out = tmp_path_factory.mktemp("a16w8") / "a16w8.tflite"
    out.write_bytes(r.model_bytes)
    return f, q, out


def test_run_is_int16_inside_with_int64_bias(edited):
    f, q, out = edited
    qm, em, fm = load_model(q), load_model(out), load_model(f)
    pairing = pair_models(fm, qm)
    run = [op for op in em.main.ops if op.type not in ("QUANTIZE", "DEQUANTIZE")][:5]
    assert [op.type for op in run] == ["CONV_2D", "DEPTHWISE_CONV_2D", "CONV_2D", "ADD", "CONV_2D"]
    for op in run:
        for t in [op.inputs[0], *op.outputs]:
            tt = em.main.tensors[t]
            assert tt.dtype == "int16" and tt.quantization.zero_points == (0,), tt.name
        if op.type == "ADD":
            continue
        wt, bt = em.main.tensors[op.inputs[1]], em.main.tensors[op.inputs[2]]
        assert wt.dtype == "int8" and set(wt.quantization.zero_points) == {0}
        assert bt.dtype == "int64"
        s_in = em.main.tensors[op.inputs[0]].quantization.scales[0]
        sw = np.asarray(wt.quantization.scales)
        np.testing.assert_allclose(bt.quantization.scales, s_in * sw, rtol=1e-6)
        # int64 bias = round(float bias of the paired float op / (S_in16 * S_w))
        q_op = next(o for o in qm.main.ops if qm.main.tensors[o.outputs[0]].name in em.main.tensors[op.outputs[0]].name)
        f_op = fm.main.ops[pairing.float_op_for(q_op.index)]
        b = fm.tensor_data(fm.main.tensors[f_op.inputs[2]])
        np.testing.assert_array_equal(em.tensor_data(bt), np.round(b / (s_in * sw)))
    # Conversions only at the edges: one QUANTIZE int8->int16 before the run, QUANTIZEs back after
    # ops whose output is read outside the run (the add's skip input conv1/dw1 stays inside).
    codes = [c for c, _, _ in op_records(out.read_bytes())]
    first = codes.index(tflite.BuiltinOperator.CONV_2D)
    assert codes[first - 1] == tflite.BuiltinOperator.QUANTIZE
    assert codes[first - 2] == tflite.BuiltinOperator.QUANTIZE  # the model's own input QUANTIZE
    assert codes.count(tflite.BuiltinOperator.QUANTIZE) == 3  # input, into the run, out of it


def test_everything_else_is_untouched_and_runs(edited):
    f, q, out = edited
    outs, consts = edited_names(q.read_bytes(), list(RUN))
    inner = outs - {t for t in outs if t in describe(out.read_bytes())["tensors"]}
    assert_untouched(q.read_bytes(), out.read_bytes(), outs, consts)
    assert inner  # the run's inner int8 tensors are gone (replaced by int16 ones)
    ys = run_both(out.read_bytes(), representative_images(3, seed=8))
    assert all(np.isfinite(y).all() for y in ys.values())


def test_a16w8_raises_the_accumulated_sqnr_of_the_run(edited):
    f, q, out = edited
    opts = CompareOptions(samples=SampleSettings(count=8, seed=1))
    before = {lay.tensor_name: lay.metrics.sqnr_db for lay in compare_models(str(f), str(q), opts).layers}
    after = {lay.tensor_name.removesuffix("/int16"): lay.metrics.sqnr_db for lay in compare_models(str(f), str(out), opts).layers}
    qm = load_model(q)
    names = [qm.main.tensors[qm.main.ops[i].outputs[0]].name for i in RUN]
    gains = [after[n] - before[n] for n in names]
    assert all(g > 2.0 for g in gains) and np.mean(gains) > 5.0, gains
    out_b = compare_models(str(f), str(q), opts).outputs[0].metrics.sqnr_db
    out_a = compare_models(str(f), str(out), opts).outputs[0].metrics.sqnr_db
    assert out_a >= out_b - 0.05


def test_ops_without_16x8_kernels_are_refused(tmp_path):
    """MEAN is not offered (its int16 kernel runs, but the edit cost output SQNR: test_a16w8_fixed_ops)."""
    from tests.helpers import verdict_fixtures as vf
    from tests.helpers.paths import REPO

    ops = vf.int16_ops(REPO / ".fixture-cache")
    mean = next(o.index for o in load_model(ops["ops_int8"]).main.ops if o.type == "MEAN")
    with pytest.raises(InputError, match="not offered for MEAN"):
        apply_plan(str(ops["ops_float"]), str(ops["ops_int8"]), SurgicalPlan((Edit("a16w8", f"op:{mean}"),)))
