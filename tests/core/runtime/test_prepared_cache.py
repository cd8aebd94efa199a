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


_KERAS_CHILD = r"""
import dataclasses, json, sys
import numpy as np
from inspector.core.compare.options import CompareOptions
from inspector.core.keras import compare_keras as ck
from inspector.core.samples.settings import SampleSettings

model, tfl, inputs, source = sys.argv[1:5]
data = dict(np.load(source))
np.savez(inputs, **data)
opts = CompareOptions(samples=SampleSettings(count=4, source=inputs))
first = ck.compare_keras_kept(model, tfl, opts)
real, calls = ck.compare_keras, []
ck.compare_keras = lambda *a, **k: calls.append("again") or real(*a, **k)
again = ck.compare_keras_kept(model, tfl, opts)
same = again.to_json() == first.to_json() and again.result.samples == 4
np.savez(inputs, **{k: v + 0.5 if v.dtype.kind == "f" else v for k, v in data.items()})  # other inputs, same name
ck.compare_keras_kept(model, tfl, opts)
ck.compare_keras_kept(model, tfl, dataclasses.replace(opts, isolated=False))
print(json.dumps({"same": same, "calls": calls}))
"""


def test_a_repeated_keras_comparison_is_read_back_without_running_it(keras_models, tmp_path):
    """Same Keras model, TFLite model, inputs and options: the result comes from disk and
    `compare_keras` (TensorFlow) does not run; other inputs under the same name, or other
    options, compare again. In a child process: TensorFlow (and the legacy-Keras switch it
    sets) stays out of this one."""
    import json
    import os
    import subprocess
    import sys

    from tests.helpers.paths import REPO

    env = {k: v for k, v in os.environ.items() if k != "TFLITE_INSPECTOR_NO_DISK_CACHE"}
    env.update(PYTHONPATH=str(REPO), XDG_CACHE_HOME=str(tmp_path / "cache"))
    argv = [sys.executable, "-c", _KERAS_CHILD, str(keras_models / "cnn_qat.h5"), str(keras_models / "cnn_qat_int8.tflite"),
            str(tmp_path / "x.npz"), str(keras_models / "cnn_inputs.npz")]  # fmt: skip
    out = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600, cwd=REPO)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got == {"same": True, "calls": ["again", "again"]}  # the repeat read back; other inputs and options ran
    assert len(list((tmp_path / "cache" / "tflite-inspector" / "prepared").glob("keras-compare-*.pickle"))) == 3


def test_an_entry_that_no_longer_holds_is_rebuilt(cache, example_pair, tmp_path):
    """A value read back that names files gone since (a Keras comparison names its twin, which the
    twin cache may have dropped) is built again, not returned: before, `compare` of a Keras model
    answered 'cannot read the file' for the twin a stale entry named."""
    f, q = (str(p) for p in example_pair)
    twin = tmp_path / "twin.tflite"
    twin.write_bytes(b"x")
    build, calls = _counting({"twin": str(twin)})
    valid = lambda v: __import__("os").path.exists(v["twin"])  # noqa: E731
    assert prepared_cache.kept("t", (f, q), (1,), build, valid) == {"twin": str(twin)} and len(calls) == 1
    assert prepared_cache.kept("t", (f, q), (1,), build, valid) and len(calls) == 1  # read back
    twin.unlink()
    assert prepared_cache.kept("t", (f, q), (1,), build, valid) and len(calls) == 2  # stale: built again


def test_a_failing_command_leaves_its_cache_entry_but_no_output(cache, example_pair, tmp_path):
    """An entry written in the command's own process is not one of its outputs: it is written at
    once, not staged in the command's output transaction, so a command that fails afterwards
    keeps the entry (the next run reads it) and still writes no output."""
    from inspector.core.writing import Target, outputs, write_output

    f, q = (str(p) for p in example_pair)
    out = tmp_path / "result.json"
    build, calls = _counting({"parts": [1, 2]})
    with pytest.raises(RuntimeError, match="the command failed"):
        with outputs([Target(str(out), "--json")]):
            prepared_cache.kept("t", (f, q), (), build)
            (entry,) = cache.glob("t-*.pickle")  # there already, inside the transaction
            write_output(str(out), "{}")
            raise RuntimeError("the command failed")
    assert not out.exists() and [p.name for p in tmp_path.iterdir() if p.name != "prepared"] == []
    assert [p.name for p in cache.iterdir()] == [entry.name]  # no staged temporary beside it
    assert prepared_cache.kept("t", (f, q), (), build) == {"parts": [1, 2]} and len(calls) == 1  # read back


def test_a_file_digest_is_remembered_on_disk_until_the_file_changes(cache, tmp_path):
    import hashlib
    import os

    model = tmp_path / "m.tflite"
    model.write_bytes(b"A" * 4096)
    prepared_cache._digest.cache_clear()  # a new process
    assert prepared_cache.content_digest(str(model)) == hashlib.sha256(b"A" * 4096).hexdigest()
    notes = list((cache / "digests").glob("*.txt"))
    assert len(notes) == 1 and notes[0].read_text() == hashlib.sha256(b"A" * 4096).hexdigest()
    notes[0].write_text("f" * 64)  # what the next process reads instead of hashing the file
    prepared_cache._digest.cache_clear()
    assert prepared_cache.content_digest(str(model)) == "f" * 64
    # Replaced by other bytes of the same size, its mtime put back (an atomic writer: a new inode).
    st = model.stat()
    fresh = tmp_path / "new.tflite"
    fresh.write_bytes(b"B" * 4096)
    os.replace(fresh, model)
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))
    prepared_cache._digest.cache_clear()
    assert prepared_cache.content_digest(str(model)) == hashlib.sha256(b"B" * 4096).hexdigest()
