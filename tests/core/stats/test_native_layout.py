"""A new statistic is safe to add (issue 37 §5): the native kernel's row of sums is checked
against the one Python field list (`native.Sums`) when the library loads. A kernel whose layout
or whose values disagree is refused with a warning and the numpy path computes the comparison,
never the mismatched kernel. Each kernel here is compiled from an edited copy of the real
source, as a contributor's half-done change would be (about 2 s per compile)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.stats import native as native_stats
from inspector.core.stats import native_source

pytestmark = pytest.mark.skipif(not native_stats.available(), reason="no C compiler for the native kernel")

REORDERED = ("#define SUM_FIELDS(F) F(x2) F(e2) F(y2)", "#define SUM_FIELDS(F) F(e2) F(x2) F(y2)")
# the layout declared right, but the channel-summing kernel writing x2 and e2 into each other's place
SWAPPED = ("out[SUM_x2] = t.x2; out[SUM_e2] = t.e2;", "out[SUM_x2] = t.e2; out[SUM_e2] = t.x2;")


def _load(monkeypatch, tmp_path, edit: tuple[str, str]):
    """`native.library()` in a fresh state, built from the real source with `edit` applied."""
    assert native_source.SOURCE.count(edit[0]) == 1  # the edit really changes the source
    monkeypatch.setattr(native_stats, "SOURCE", native_source.SOURCE.replace(*edit))
    monkeypatch.setattr(native_stats, "_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(native_stats, "_lib", None)
    monkeypatch.setattr(native_stats, "_tried", False)
    return native_stats.library()


def test_the_kernel_declares_the_python_field_list():
    lib = native_stats.library()
    assert native_stats.kernel_layout(lib) == native_stats.SUM_FIELDS == native_stats.Sums._fields
    assert native_stats.check_kernel(lib) is None


def test_a_kernel_with_another_layout_is_refused_and_numpy_computes(fixture_path, monkeypatch, tmp_path):
    f, q = str(fixture_path("float")), str(fixture_path("int8"))
    opts = CompareOptions(samples=SampleSettings(count=2), runtime="reference", isolated=False)
    good = compare_models(f, q, opts)  # the checked kernel
    with pytest.warns(RuntimeWarning, match=r"refused \(it writes its sums as \(e2, x2, y2"):
        assert _load(monkeypatch, tmp_path, REORDERED) is None
    assert any(tmp_path.glob("stats_*.so"))  # it was built and loaded, then refused
    assert not native_stats.available()
    fallback = compare_models(f, q, opts)
    for a, b in zip(good.layers, fallback.layers, strict=True):
        ma, mb = a.metrics, b.metrics
        if math.isinf(ma.sqnr_db):
            assert math.isinf(mb.sqnr_db)
            continue
        # the mismatched kernel would have read e2 as x2: SQNR 10·log10(Σe²/Σx²), the sign flipped
        assert mb.sqnr_db == pytest.approx(ma.sqnr_db, rel=1e-5, abs=1e-6)
        assert mb.mse == pytest.approx(ma.mse, rel=1e-5) and mb.clip_rate == ma.clip_rate


def test_a_kernel_that_writes_a_field_in_another_place_is_refused(monkeypatch, tmp_path):
    with pytest.warns(RuntimeWarning, match=r"on a probe, its 'x2' \(from batch \(int8, channels\)"):
        assert _load(monkeypatch, tmp_path, SWAPPED) is None


def test_a_python_field_list_the_kernel_does_not_write_refuses_it(monkeypatch):
    """Only the Python side changed (a new sum added to `Sums`, the C list not): refused."""
    lib = native_stats.library()
    monkeypatch.setattr(native_stats, "SUM_FIELDS", (*native_stats.SUM_FIELDS, "x4"))
    reason = native_stats.check_kernel(lib)
    assert reason is not None and "x2, e2, y2, xy, e, emax, xmin, xmax, clip)" in reason and "clip, x4)" in reason


def test_the_probe_data_separates_every_field():
    """The probe can only catch a misplaced field if no two fields hold the same value on it."""
    x = np.linspace(-2.0, 3.0, 16, dtype=np.float32)
    q = np.clip(np.round(x / 0.1) + 2.0 + np.arange(16) % 3 - 1, -128, 127).astype(np.int8)
    y = (q.astype(np.float64) - 2.0) * 0.1
    e = x.astype(np.float64) - y
    xd = x.astype(np.float64)
    values = [np.sum(xd * xd), np.sum(e * e), np.sum(y * y), np.sum(xd * y), e.sum(), np.abs(e).max(), xd.min(),
              xd.max(), np.count_nonzero((xd < -1.5) | (xd > 2.5))]  # fmt: skip
    for i, a in enumerate(values):
        for b in values[i + 1 :]:
            assert abs(a - b) > 1e-3 * max(abs(a), abs(b)), (a, b)
