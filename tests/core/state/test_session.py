"""Session files: round trip, change detection, migration from schema 1, clean errors; crash recovery."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.recovery import CrashRecovery, pid_alive
from inspector.core.state.session import (
    SCHEMA_VERSION,
    SessionFileError,
    load_session,
    model_changes,
    save_session,
)

COMPARE = {  # the shape of a compare JSON: per-tensor metrics with inf written as null
    "float_model": "a.tflite",
    "tensors": [{"name": "conv1", "metrics": {"mse": 1.5e-05, "sqnr_db": 38.2, "cosine": 0.9999}},
                {"name": "logits", "metrics": {"mse": 0.0, "sqnr_db": None, "cosine": 1.0}}],
}


@pytest.fixture
def models(tmp_path, fixture_path):
    f, q = tmp_path / "float.tflite", tmp_path / "int8.tflite"
    shutil.copy(fixture_path("float"), f)
    shutil.copy(fixture_path("int8"), q)
    return f, q


def test_round_trip(tmp_path, models):
    f, q = models
    state = {
        "models": {"float": str(f), "quant": q},
        "inputs": {"source": "npz", "path": "/data/x.npz", "key": "image", "count": 8},
        "selection": {"subgraph": 0, "tensor": 12, "op": 3},
        "requantize_plans": [{"layer": "conv1", "weights": "per_channel", "activations": "int16"}],
        "results": {"compare": COMPARE},
    }
    path = tmp_path / "s.tqi.json"
    written = save_session(path, state)
    loaded = load_session(path)
    assert loaded == written
    assert loaded["schema_version"] == SCHEMA_VERSION
    for key in ("inputs", "selection", "requantize_plans"):
        assert loaded[key] == state[key]
    assert loaded["results"]["compare"] == COMPARE
    fm = loaded["models"]["float"]
    assert fm["path"] == str(f.resolve()) and fm["size"] == f.stat().st_size
    assert fm["sha256"] == hashlib.sha256(f.read_bytes()).hexdigest()[:16]
    assert model_changes(loaded) == {}


def test_detects_changed_and_missing_models(tmp_path, models):
    f, q = models
    path = tmp_path / "s.tqi.json"
    save_session(path, {"models": {"float": str(f), "quant": str(q)}})
    data = bytearray(f.read_bytes())
    data[-1] ^= 0xFF  # same size, different content
    f.write_bytes(bytes(data))
    q.unlink()
    changes = model_changes(load_session(path))
    assert changes == {
        "float": f"{f.resolve()} changed since the session was saved (same size, different content)",
        "quant": f"{q.resolve()} no longer exists",
    }
    f.write_bytes(bytes(data[:-10]))
    assert model_changes(load_session(path))["float"].endswith(f"(size {len(data)} -> {len(data) - 10} bytes)")


V1 = """{
  "schema_version": 1,
  "float_model": "/models/mobilenet_float.tflite",
  "quant_model": "/models/mobilenet_int8.tflite",
  "inputs_path": "/data/calib.npz",
  "num_samples": 16,
  "selected_tensor": "conv1/Relu",
  "compare": {"tensors": [{"name": "conv1/Relu", "metrics": {"sqnr_db": 31.5}}]}
}
"""


def test_migrates_schema_1(tmp_path):
    p = tmp_path / "old.tqi.json"
    p.write_text(V1)
    s = load_session(p)
    assert s["schema_version"] == SCHEMA_VERSION and s["migrated_from"] == 1
    assert s["models"] == {
        "float": {"path": "/models/mobilenet_float.tflite", "size": None, "sha256": None},
        "quant": {"path": "/models/mobilenet_int8.tflite", "size": None, "sha256": None},
    }
    assert CompareOptions.from_json(s["inputs"]).samples == SampleSettings(count=16, source="/data/calib.npz")
    assert s["selection"] == {"tensor_name": "conv1/Relu"}
    assert s["requantize_plans"] == []
    assert s["results"]["compare"]["tensors"][0]["metrics"]["sqnr_db"] == 31.5
    assert p.read_text() == V1  # reading never rewrites
    assert model_changes(s) == {
        "float": "/models/mobilenet_float.tflite no longer exists",
        "quant": "/models/mobilenet_int8.tflite no longer exists",
    }
    # saving a migrated session writes the current schema
    save_session(tmp_path / "new.tqi.json", s)
    assert json.loads((tmp_path / "new.tqi.json").read_text())["schema_version"] == SCHEMA_VERSION


@pytest.mark.parametrize(
    "content, message",
    [
        ("", "the session file is empty"),
        ('{"schema_version": 2, "models": {', "the session file is not valid JSON (line 1, column 34: Expecting property name"),
        ("[1, 2]", "not a tflite-inspector session (no schema_version)"),
        ('{"models": {}}', "not a tflite-inspector session (no schema_version)"),
        ('{"schema_version": "2"}', "invalid schema_version '2'"),
        ('{"schema_version": 99}', "saved by a newer version of the app (session schema 99); this version reads up to schema 3"),
        ('{"schema_version": 2, "selection": [1]}', "session key 'selection' should be an object"),
        ('{"schema_version": 2, "models": {"float": {"size": 3}}}', "session key 'models.float' should be an object with a 'path'"),
        ('{"schema_version": 2, "models": {"float": {"path": "a", "size": -3}}}', "session key 'models.float.size' should be a byte count"),
        ('{"schema_version": 2, "requantize_plans": [3]}', "session key 'requantize_plans' should be a list of objects"),
        ('{"schema_version": 1, "float_model": 7}', "'float_model' should be a path (schema 1)"),
    ],
)
def test_clean_errors(tmp_path, content, message):
    p = tmp_path / "bad.tqi.json"
    p.write_text(content)
    with pytest.raises(SessionFileError) as ei:
        load_session(p)
    assert ei.value.message.startswith(message), ei.value.message
    assert ei.value.path == str(p)


def test_binary_and_missing_files(tmp_path):
    p = tmp_path / "bin.tqi.json"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SessionFileError, match="not UTF-8"):
        load_session(p)
    with pytest.raises(SessionFileError, match="cannot read the session file"):
        load_session(tmp_path / "nope.tqi.json")


def test_unserializable_state_is_a_clean_error_and_writes_nothing(tmp_path):
    p = tmp_path / "s.tqi.json"
    with pytest.raises(SessionFileError, match="cannot save the session"):
        save_session(p, {"results": {"compare": {"sqnr_db": float("inf")}}})
    assert not p.exists() and list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------- crash recovery
def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    assert not pid_alive(proc.pid)
    return proc.pid


def test_recovery_after_abnormal_exit(tmp_path):
    # An instance that autosaved and then died without clean_exit (its process is gone).
    dead = CrashRecovery(tmp_path, pid=_dead_pid())
    dead.start()
    dead.autosave({"selection": {"tensor": 7}, "results": {"compare": COMPARE}})
    # A clean instance leaves nothing behind.
    clean = CrashRecovery(tmp_path, pid=os.getppid())
    clean.start()
    clean.autosave({"selection": {"tensor": 1}})
    clean.clean_exit()
    assert not clean.marker.exists() and not clean.autosave_file.exists()

    me = CrashRecovery(tmp_path)
    found = me.start()
    assert [r.pid for r in found] == [dead.pid]
    restored = me.restore(found[0])
    assert restored["selection"] == {"tensor": 7} and restored["results"]["compare"] == COMPARE
    me.discard(found[0])
    assert me.recoverable() == []
    assert sorted(p.name for p in tmp_path.iterdir()) == [me.marker.name]
    me.clean_exit()
    assert list(tmp_path.iterdir()) == []


def test_running_instances_are_not_offered(tmp_path):
    other = CrashRecovery(tmp_path, pid=os.getppid())  # alive: the process that runs pytest
    other.start()
    other.autosave({"selection": {}})
    assert CrashRecovery(tmp_path).recoverable() == []


def test_crash_before_any_autosave_offers_nothing_and_cleans_up(tmp_path):
    CrashRecovery(tmp_path, pid=_dead_pid()).start()
    assert CrashRecovery(tmp_path).recoverable() == []
    assert list(tmp_path.glob("running-*.json")) == []


def test_recovery_of_a_killed_process(tmp_path):
    """A real process autosaves, is SIGKILLed, and its session is offered."""
    code = (
        "import sys, time; from inspector.core.state.recovery import CrashRecovery; "
        f"r = CrashRecovery(__import__('pathlib').Path({str(tmp_path)!r})); r.start(); "
        "r.autosave({'selection': {'tensor': 42}}); print('saved', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "saved"
    proc.kill()
    proc.wait()
    found = CrashRecovery(tmp_path).recoverable()
    assert [r.pid for r in found] == [proc.pid]
    assert load_session(found[0].autosave)["selection"] == {"tensor": 42}


V2_INPUTS = {"samples": 0, "seed": 7, "inputs": "/data/imgs", "runtime": "reference", "isolated": True,
             "keep_values": [5, 2], "normalization": "0,1", "threads": 2, "task_kind": None}  # fmt: skip


def test_migrates_schema_2_flat_inputs(tmp_path):
    p = tmp_path / "v2.tqi.json"
    p.write_text(json.dumps({"schema_version": 2, "models": {"float": None, "quant": None}, "inputs": V2_INPUTS,
                             "selection": {"op_b": 3}, "requantize_plans": [], "results": {}}))  # fmt: skip
    s = load_session(p)
    assert s["schema_version"] == SCHEMA_VERSION and s["migrated_from"] == 2
    o = CompareOptions.from_json(s["inputs"])
    # 0 was the GUI's "all samples of the file"
    assert o.samples == SampleSettings(count=None, seed=7, source="/data/imgs", normalization="0,1")
    assert o.runtime == "reference" and o.isolated and o.keep_values == frozenset({2, 5})
    assert s["inputs"]["samples"] == {"count": None, "seed": 7, "source": "/data/imgs", "normalization": "0,1"}
    assert s["selection"] == {"op_b": 3}


def test_keras_part_round_trip_relative_paths_and_old_sessions(tmp_path, models, monkeypatch):
    """Issue 27 item 9: the Keras source of model A and its Keras-vs-B table are saved (paths made
    absolute, relative ones against the session's folder); a session without it loads as before."""
    f, q = models
    table = {"quant": str(q), "layers": [{"op_index": 1, "keras_layer": "dense"}]}
    path = tmp_path / "k.tqi.json"
    monkeypatch.chdir(tmp_path)
    written = save_session(path, {"models": {"float": str(f), "quant": str(q)},
                                  "keras": {"source": "model.h5", "float_twin": str(f), "comparison": table}})
    assert written["keras"]["source"] == str(tmp_path / "model.h5")
    back = load_session(path)
    assert back["keras"] == {"source": str(tmp_path / "model.h5"), "float_twin": str(f), "comparison": table}
    monkeypatch.chdir("/")
    hand = json.loads(path.read_text())
    hand["keras"]["source"] = "sub/model.h5"
    path.write_text(json.dumps(hand))
    assert load_session(path)["keras"]["source"] == str(tmp_path / "sub" / "model.h5")
    del hand["keras"]
    path.write_text(json.dumps(hand))
    assert "keras" not in load_session(path)
    assert "keras" not in save_session(tmp_path / "n.tqi.json", {"models": {"float": str(f)}, "keras": None})
    hand["keras"] = {"comparison": {}}
    path.write_text(json.dumps(hand))
    with pytest.raises(SessionFileError, match="session key 'keras' should be an object with a 'source' path"):
        load_session(path)
