"""`ModelRunner.run` hands out the same views run after run (made once: ~100 views per run cost a
tenth of a small model's inference). They must show each run's values, and a resize (buffers
move) must drop them and refuse while a caller still holds one, as before."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.errors import RuntimeFailure
from inspector.core.runtime.runner import ModelRunner
from inspector.core.tflite.model import load_model


def test_reused_views_show_each_run_and_a_resize_drops_them(cnn_pair):
    """On the fixture CNN, whose flatten computes its shape (it takes a batch of 2; the bundled
    digits example reshapes to a fixed [1, 8, 8, 1] and refuses one)."""
    model = load_model(str(cnn_pair[0]))
    runner = ModelRunner(model, "reference")
    i = runner.input_indices[0]
    shape = model.main.tensors[i].shape
    rng = np.random.default_rng(0)
    x1, x2 = (rng.uniform(-1, 1, shape).astype(np.float32) for _ in range(2))
    fresh = ModelRunner(model, "reference")
    want1 = {k: np.array(v) for k, v in fresh.run({i: x1}).items()}
    want2 = {k: np.array(v) for k, v in fresh.run({i: x2}).items()}
    assert any(not np.array_equal(want1[k], want2[k]) for k in runner.exposed)
    a = runner.run({i: x1})
    assert all(np.array_equal(a[k], want1[k]) for k in runner.exposed)
    b = runner.run({i: x2})
    assert all(b[k] is a[k] for k in runner.exposed)  # the same views, now of the second run
    assert all(np.array_equal(b[k], want2[k]) for k in runner.exposed)
    batch = np.concatenate([x1, x2])  # batch 2: the input is resized, every buffer may move
    with pytest.raises(RuntimeFailure, match="internal error"):
        runner.run({i: batch})  # a and b are still alive
    del a, b
    c = runner.run({i: batch})
    out = model.main.outputs[0]
    assert c[out].shape[0] == 2
    np.testing.assert_allclose(c[out][:1], want1[out], rtol=1e-5)  # batched kernels: last-bit differences
    np.testing.assert_allclose(c[out][1:], want2[out], rtol=1e-5)
