"""Prepared models kept on disk between commands (`runtime.prepared_cache`): keyed by the models'
bytes, what was asked and the code; the isolated model read back is the one a build makes."""

from __future__ import annotations

import shutil

import pytest

from inspector.core.compare import isolated
from inspector.core.compare.pairing import pair_models
from inspector.core.runtime import prepared_cache
from inspector.core.tflite import rewrite
from inspector.core.tflite.model import load_model


@pytest.fixture
def cache(monkeypatch, tmp_path):
    monkeypatch.setattr(prepared_cache, "folder", lambda: tmp_path / "prepared")
    monkeypatch.delenv("TFLITE_INSPECTOR_NO_DISK_CACHE", raising=False)
    return tmp_path / "prepared"


def _counting(value):
    calls = []

    def build():
        calls.append(1)
        return value

    return build, calls


def test_an_entry_is_keyed_by_content_and_what_was_asked(cache, example_pair, tmp_path):
    f, q = (str(p) for p in example_pair)
    build, calls = _counting({"parts": [1, 2]})
    assert prepared_cache.kept("t", (f, q), (1,), build) == {"parts": [1, 2]}
    assert prepared_cache.kept("t", (f, q), (1,), build) == {"parts": [1, 2]} and len(calls) == 1
    copy = tmp_path / "copy.tflite"
    shutil.copyfile(f, copy)  # same bytes elsewhere: the same entry
    assert prepared_cache.kept("t", (str(copy), q), (1,), build) == {"parts": [1, 2]} and len(calls) == 1
    prepared_cache.kept("t", (f, q), (2,), build)  # another request
    prepared_cache.kept("t", (q, f), (1,), build)  # the files the other way round
    assert len(calls) == 3
    data = bytearray(copy.read_bytes())
    data[-1] ^= 1  # other bytes (same size)
    copy.write_bytes(bytes(data))
    prepared_cache.kept("t", (str(copy), q), (1,), build)
    assert len(calls) == 4 and len(list(cache.glob("t-*.pickle"))) == 4


def test_a_corrupt_entry_is_rebuilt_and_old_entries_are_dropped(cache, example_pair, monkeypatch):
    f, q = (str(p) for p in example_pair)
    build, calls = _counting([3])
    prepared_cache.kept("t", (f, q), (), build)
    (entry,) = cache.glob("t-*.pickle")
    entry.write_bytes(b"not a pickle")
    assert prepared_cache.kept("t", (f, q), (), build) == [3] and len(calls) == 2
    monkeypatch.setattr(prepared_cache, "MAX_ENTRIES", 2)
    for k in range(4):
        prepared_cache.kept("t", (f, q), (k,), build)
    assert len(list(cache.glob("*.pickle"))) == 2


def test_switched_off_by_the_environment(cache, example_pair, monkeypatch):
    monkeypatch.setenv("TFLITE_INSPECTOR_NO_DISK_CACHE", "1")
    build, calls = _counting(1)
    f, q = (str(p) for p in example_pair)
    prepared_cache.kept("t", (f, q), (), build)
    prepared_cache.kept("t", (f, q), (), build)
    assert len(calls) == 2 and not cache.exists()


def test_the_isolated_parts_read_back_are_the_ones_built(cache, example_pair, monkeypatch):
    fm, qm = (load_model(str(p)) for p in example_pair)
    pairing = pair_models(fm, qm)
    monkeypatch.setattr(rewrite, "_cache", type(rewrite._cache)())  # no in-process copy
    built = isolated.build_isolated_parts(fm, qm, pairing, 2)
    assert len(list(cache.glob("isolated-*.pickle"))) == 1
    monkeypatch.setattr(rewrite, "_cache", type(rewrite._cache)())
    monkeypatch.setattr(isolated, "_build", lambda *a: pytest.fail("rebuilt although kept on disk"))
    again = isolated.build_isolated_parts(fm, qm, pairing, 2)
    assert again is not built and len(again) == len(built) == 2
    for a, b in zip(again, built, strict=True):
        assert a.content == b.content and a.feeds == b.feeds and a.outputs == b.outputs
        assert a.float_ops == b.float_ops and a.notes == b.notes


def test_a_repeated_keras_comparison_is_read_back_without_running_it(cache, keras_models, tmp_path, monkeypatch):
    """Same Keras model, TFLite model, inputs and options: the result comes from disk and
    `compare_keras` (TensorFlow) does not run; other inputs under the same name, or other
    options, compare again."""
    import dataclasses

    import numpy as np

    from inspector.core.compare.options import CompareOptions
    from inspector.core.keras import compare_keras as ck
    from inspector.core.samples.settings import SampleSettings

    model, tfl = str(keras_models / "cnn_qat.h5"), str(keras_models / "cnn_qat_int8.tflite")
    inputs = tmp_path / "x.npz"
    data = dict(np.load(keras_models / "cnn_inputs.npz"))
    np.savez(inputs, **data)
    opts = CompareOptions(samples=SampleSettings(count=4, source=str(inputs)))
    first = ck.compare_keras_kept(model, tfl, opts)
    monkeypatch.setattr(ck, "compare_keras", lambda *a, **k: pytest.fail("compared again"))
    again = ck.compare_keras_kept(model, tfl, opts)
    assert again.to_json() == first.to_json() and again.result.samples == 4
    calls = []
    monkeypatch.setattr(ck, "compare_keras", lambda *a, **k: calls.append(a) or first)
    np.savez(inputs, **{k: v + 0.5 for k, v in data.items()})
    ck.compare_keras_kept(model, tfl, opts)
    ck.compare_keras_kept(model, tfl, dataclasses.replace(opts, isolated=False))
    assert len(calls) == 2
