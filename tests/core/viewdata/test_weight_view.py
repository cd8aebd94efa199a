"""Zoom to grid, data extent and bin choice of the weight histogram, computed in core."""

from __future__ import annotations

import numpy as np
import pytest

from inspector.core.compare.pairing import pair_models
from inspector.core.compare.weights import analyze_tensors
from inspector.core.tflite.model import load_model
from inspector.core.viewdata.weight_view import FINE_BINS_VISIBLE, data_extent, fine_bins, grid_zoom


@pytest.mark.parametrize("channel", [None, 3])
def test_grid_zoom_is_centred_on_a_grid_point(fixture_path, channel):
    mf, mq = load_model(fixture_path("float")), load_model(fixture_path("int8"))
    conv = next(op for op in mq.main.ops if op.type == "CONV_2D")
    tq = mq.main.tensors[conv.inputs[1]]
    tf = mf.main.tensors[pair_models(mf, mq).float_for_quant(tq.index)]
    w = analyze_tensors(mf, tf, mq, tq, channel=channel)
    q = tq.quantization
    step = q.scales[channel] if channel is not None else w.grid_step or float(np.median(q.scales))
    r = grid_zoom(w, steps=16)
    assert r.x1 - r.x0 == pytest.approx(16 * step)
    centre = (r.x0 + r.x1) / 2
    if w.grid_step is not None:  # a grid point in the middle: centre / S + Z is an integer
        z = q.zero_points[channel or 0]
        assert centre / step + z == pytest.approx(round(centre / step + z), abs=1e-6)
    assert abs(centre) <= step  # the weights straddle zero: zoomed around it
    # independent: the highest count of either histogram in the zoomed bins
    lo, hi = np.searchsorted(w.edges, [r.x0, r.x1])
    want = max(float(c[max(lo - 1, 0) : hi].max()) for c in (w.a_counts, w.b_counts))
    assert r.y_top == want and r.y_max(False) == pytest.approx(want * 1.05)
    assert r.y_max(True) == pytest.approx(np.log10(want) * 1.05)
    ext = data_extent(w)
    occupied = np.nonzero(w.a_counts + w.b_counts)[0]
    assert ext == (w.edges[occupied[0]], w.edges[occupied[-1] + 1])
    width = float(w.edges[1] - w.edges[0])
    assert fine_bins(w, 0.0, FINE_BINS_VISIBLE * width) and (w.coarse_edges is None or not fine_bins(w, 0.0, (FINE_BINS_VISIBLE + 1) * width))


def test_grid_zoom_centres_on_a_channel_far_from_zero(example_pair):
    """Issue 35, item 9: Zoom to grid centred on zero, so a channel of nine depthwise weights with
    none near zero (the example's depthwise op, channel 4: values from -0.64 to 1.38) showed an
    empty window. The window goes where the channel's values are; counted on the raw values."""
    fp, qp = (str(p) for p in example_pair)
    mf, mq = load_model(fp), load_model(qp)
    dw = next(op for op in mq.main.ops if op.type == "DEPTHWISE_CONV_2D")
    tq = mq.main.tensors[dw.inputs[1]]
    tf = mf.main.tensors[pair_models(mf, mq).float_for_quant(tq.index)]
    ch, q = 4, tq.quantization
    s, z = float(q.scales[ch]), int(q.zero_points[ch])
    a = np.asarray(mf.tensor_data(tf), np.float64)[..., ch].ravel()
    b = (np.asarray(mq.tensor_data(tq), np.float64)[..., ch].ravel() - z) * s
    values = np.concatenate([a, b])
    assert not np.any(np.abs(values) <= 8 * s)  # nothing within 8 steps of zero: the old window was empty
    r = grid_zoom(analyze_tensors(mf, tf, mq, tq, channel=ch), steps=16)
    assert r.x1 - r.x0 == pytest.approx(16 * s)
    held = int(np.count_nonzero((values >= r.x0) & (values <= r.x1)))
    best = max(int(np.count_nonzero((values >= v) & (values <= v + 16 * s))) for v in values)  # brute force
    assert held >= max(1, best - 1), (held, best, r)  # the densest window, give or take the grid snap at its edge
    centre = (r.x0 + r.x1) / 2
    assert centre / s + z == pytest.approx(round(centre / s + z), abs=1e-6)  # still a grid point in the middle
