"""Opening a ~50 MB model (validation + parse) reads it in place: no copy of the file."""

from __future__ import annotations

import tracemalloc

import numpy as np

from inspector.core.tflite.model import Model
from tests.helpers.hostile_fixtures import MEDIUM_WIDTHS, HostileCache, dense_weights


def test_open_does_not_copy_the_file():
    path = HostileCache().path("medium_float")
    size = path.stat().st_size
    assert size > 50_000_000
    tracemalloc.start()
    try:
        model = Model(path)
        kernel = model.main.tensor_by_name("dense_0/kernel")
        data = model.tensor_data(kernel)
        total = sum(0 if (d := model.tensor_data(t)) is None else d.size for t in model.main.tensors)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 5_000_000, f"opening a {size / 1e6:.0f} MB model allocated {peak / 1e6:.1f} MB"
    assert not data.flags.owndata and not data.flags.writeable  # a read-only view over the map
    assert data.shape == (MEDIUM_WIDTHS[1], MEDIUM_WIDTHS[0]) and total == data.size + MEDIUM_WIDTHS[1]
    w, b = dense_weights(MEDIUM_WIDTHS)[0]
    np.testing.assert_array_equal(data[::97], w[::97])
    np.testing.assert_array_equal(model.tensor_data(model.main.tensor_by_name("dense_0/bias")), b)
