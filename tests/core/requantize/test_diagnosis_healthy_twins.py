"""Healthy twins (issue 33): models quantized without a planted fault carry a cause on at most 2 %
of their layers, and no proposed fix is one measured to gain less than 0.5 dB.

- a MobileNetV2-like net (Keras MobileNetV2 160, alpha 0.5, random weights, converter int8
  per-channel; `surgical_fixtures`) on smooth random images (the fixture has no real data);
- the generated residual stack of 1,020 ops (`many_op_fixtures.residual_pair`) with no block planted.

(The trained depthwise-separable CNN's twin is `test_diagnosis_zoo.test_healthy_twin_is_quiet`.
The digits transformer of `diagnosis_zoo_transformer` has no dependable healthy int8 twin: by
the samples its unplanted twins carry real measured causes or none (see that module); they are
shown in `tests/perf/bench_diagnosis.py`.)
The leading fix's gain is checked against numpy on LiteRT's outputs of the fixed model.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.options import CompareOptions
from inspector.core.requantize.blame import MIN_GAIN_DB, compare_and_blame
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO

ROOT = REPO / ".fixture-cache"
MAX_FLAGGED = 0.02


def _mobilenet():
    from tests.helpers.surgical_fixtures import cache_paths, npz

    m = cache_paths(ROOT)
    return m["mnv2_float"], m["mnv2_int8"], SampleSettings(ALL, source=str(npz(ROOT, "eval", 48, 2)))


def _residual():
    from tests.helpers.many_op_fixtures import residual_pair

    f, q = residual_pair(ROOT, 340, -1)  # 1,020 ops, no block's range cut
    return f, q, SampleSettings(16)


def _outputs(path: str | bytes, feeds: list[list[np.ndarray]]) -> np.ndarray:
    """The (one) output of every sample, flattened (float; int8 I/O by its own parameters)."""
    it = Interpreter(model_content=path) if isinstance(path, bytes) else Interpreter(model_path=path)
    it.allocate_tensors()
    ins, outs = it.get_input_details(), it.get_output_details()
    assert len(outs) == 1
    rows = []
    for feed in feeds:
        for d, x in zip(ins, feed, strict=True):
            x = np.asarray(x, np.float32).reshape(d["shape"])
            if d["dtype"] != np.float32:
                s, z = d["quantization"]
                x = np.clip(np.round(x / s) + z, -128, 127).astype(d["dtype"])
            it.set_tensor(d["index"], x)
        it.invoke()
        ys = []
        for d in outs:
            y = np.array(it.get_tensor(d["index"]), np.float64)
            if d["dtype"] != np.float32:
                s, z = d["quantization"]
                y = (y - z) * s
            ys.append(y.ravel())
        rows.append(np.concatenate(ys))
    return np.stack(rows)


@pytest.mark.parametrize("twin", [_mobilenet, _residual], ids=["mobilenet_v2", "residual_1020"])
def test_healthy_twin_carries_few_causes_and_no_small_fix(twin):
    f, q, samples = twin()
    f, q = str(f), str(q)
    opts = CompareOptions(samples=samples)
    r = compare_and_blame(f, q, opts)
    layers = {lay.op_index: lay for lay in r.layers}
    flagged = [k for k, lay in layers.items() if lay.diagnosis is not None and lay.diagnosis.cause != "none"]
    print(f"{twin.__name__}: {len(flagged)}/{len(layers)} layers with a cause; roots "
          f"{[(rc.op_index, rc.cause, rc.fix_gain_db) for rc in r.root_causes]}")  # fmt: skip
    assert len(flagged) <= MAX_FLAGGED * len(layers), [(k, layers[k].diagnosis.cause) for k in flagged]
    fixed = [rc for rc in r.root_causes if rc.fix is not None]
    assert all(rc.fix_gain_db is not None and rc.fix_gain_db >= MIN_GAIN_DB for rc in fixed)
    if not fixed:
        return
    # the gains shown are numpy's on LiteRT outputs of the fixed models (held-out samples)
    feeds = [s.inputs for s in open_source(load_model(f), load_model(q), samples)]
    ev = feeds[split_samples(len(feeds)).evaluation_start:]
    x = _outputs(f, ev)
    before = np.sum((x - _outputs(q, ev)) ** 2) / np.sum(x**2)  # blame's output error energy
    for rc in fixed[:1]:  # the leading one (a 1,500-op model's edit and runs take seconds each)
        y = _outputs(apply_plan(f, q, fix_plan(rc.fix, opts.samples), runtime=opts.runtime).model_bytes, ev)
        after = np.sum((x - y) ** 2) / np.sum(x**2)
        assert rc.fix_gain_db == pytest.approx(10 * np.log10(before / after), abs=1e-3)
