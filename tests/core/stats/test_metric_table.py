"""One metric presentation table (issue 27 §4): every metric of `Metrics` has exactly one row,
and the streaming sums are named in the order the C kernel writes them."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from inspector.core.stats import native as native_stats
from inspector.core.stats.metric_table import METRIC_TABLE, spec
from inspector.core.stats.metrics import METRIC_KEYS, Metrics


def test_every_metric_key_has_exactly_one_row():
    keys = [m.key for m in METRIC_TABLE]
    assert sorted(keys) == sorted(METRIC_KEYS)  # one row each, none extra
    fields = {f.name for f in dataclasses.fields(Metrics)}
    assert set(keys) <= fields
    with pytest.raises(KeyError):
        spec("no_such_metric")


def test_rows_format_as_the_presenters_did():
    """The wording and digits every presenter showed before the table (GUI tooltips, report)."""
    assert spec("sqnr_db").text(31.23456) == "31.23 dB" and spec("sqnr_db").header == "SQNR (dB)"
    assert spec("sqnr_db").text(float("inf")) == "∞" and spec("mse").text(None) == "n/a"
    assert spec("mse").text(1.234567e-5) == "1.235e-05" and spec("mse").header == "MSE (float units²)"
    assert spec("clip_rate").text(0.012345) == "1.23 %" and spec("clip_rate").header == "clip rate (%)"
    assert spec("cosine").text(0.99987654) == "0.999877"
    assert spec("rmse_over_scale").header == "RMSE / scale (steps)"
    assert [m.key for m in METRIC_TABLE if m.higher_is_better] == ["sqnr_db", "range_use", "cosine"]


@pytest.mark.skipif(not native_stats.available(), reason="no C compiler for the native kernel")
def test_named_sums_are_the_kernels_positions():
    """Each named field of `Sums` is the sum its name says (numpy, float64, on the same data)."""
    rng = np.random.default_rng(3)
    x = rng.normal(0, 2, 4096).astype(np.float32)
    s, z = 0.05, 3
    q = np.clip(np.round(x / s) + z, -128, 127).astype(np.int8)
    lo, hi = (-128 - z - 0.5) * s, (127 - z + 0.5) * s
    t, channels = native_stats.tensor_sums(x, q, s, z, lo, hi, None)
    assert isinstance(t, native_stats.Sums) and channels == {}
    xd, yd = x.astype(np.float64), (q.astype(np.float64) - z) * s
    e = xd - yd
    want = native_stats.Sums(x2=np.sum(xd * xd), e2=np.sum(e * e), y2=np.sum(yd * yd), xy=np.sum(xd * yd),
                             e=np.sum(e), emax=np.max(np.abs(e)), xmin=xd.min(), xmax=xd.max(),
                             clip=np.count_nonzero((xd < lo) | (xd > hi)))
    for name in native_stats.SUM_FIELDS:
        assert getattr(t, name) == pytest.approx(getattr(want, name), rel=1e-6, abs=1e-9), name
    assert t.clip > 0  # the data saturate, so the clip position is really tested
    row = np.array(t)
    assert row[native_stats.XMIN] == t.xmin and row[native_stats.CLIP] == t.clip and row[native_stats.EMAX] == t.emax
