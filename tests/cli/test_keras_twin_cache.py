"""Issue 29 §5: the time to the first figure for a Keras model. `--verbose` says on stderr what
the wait is spent on (loading TensorFlow, loading the model, converting); the converted twins
(and `info`) are kept in a cache keyed by the model's content and the tool version, so a second
command on the same model (or a copy of it) imports no TensorFlow and converts nothing
(before: `info qat.h5` converted its int8 twin on every call, 11-19 s)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import inspector.core.keras.twin_cache as tc
from tests.helpers.paths import REPO


def _info(model, cache, *extra):
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_CACHE_HOME": str(cache)}
    return subprocess.run([sys.executable, "-m", "inspector", "info", str(model), "--verbose", *extra], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=600)  # fmt: skip


def _steps(stderr: str) -> list[str]:
    lines = stderr.strip().splitlines()
    assert all(ln.startswith("tflite-inspector info: ") and " s  " in ln for ln in lines), stderr
    return [ln.split(" s  ", 1)[1] for ln in lines]


def test_verbose_steps_and_the_second_info_comes_from_the_cache(tmp_path, keras_models):
    cache = tmp_path / "cache"
    first = _info(keras_models / "mlp_qat.h5", cache, "--json", tmp_path / "first.json")
    assert first.returncode == 0, first.stderr
    steps = _steps(first.stderr)
    for want in ("loading the model mlp_qat.h5", "converting the float twin", "converting the int8 twin", "done"):
        assert want in steps, (want, steps)
    assert steps.index("loading the model mlp_qat.h5") < steps.index("converting the float twin")
    (entry,) = (cache / "tflite-inspector" / "keras-twins").iterdir()
    assert {p.name for p in entry.iterdir()} >= {"mlp_qat_float.tflite", "mlp_qat_int8.tflite", "mlp_qat.twins.json", "info.json"}

    copy = tmp_path / "copy" / "other_name.h5"  # the same content elsewhere: the same entry
    copy.parent.mkdir()
    shutil.copy(keras_models / "mlp_qat.h5", copy)
    second = _info(copy, cache, "--json", tmp_path / "second.json")
    assert second.returncode == 0, second.stderr
    steps2 = _steps(second.stderr)
    assert not [s for s in steps2 if "TensorFlow" in s or "converting" in s or "loading the model" in s], steps2
    assert [p.name for p in (cache / "tflite-inspector" / "keras-twins").iterdir()] == [entry.name]
    a, b = json.loads((tmp_path / "first.json").read_text()), json.loads((tmp_path / "second.json").read_text())
    assert b["path"] == str(copy) and a["path"] == str(keras_models / "mlp_qat.h5")
    a.pop("path"), b.pop("path")
    assert a == b and a["tflite"] == "int8 twin converted from the QAT ranges" and len(a["qat"]) == 4
    assert second.stdout.splitlines()[1:] == first.stdout.splitlines()[1:]  # the same text after the title line


def test_the_key_follows_content_and_tool_version(tmp_path, monkeypatch):
    model = tmp_path / "m.h5"
    model.write_bytes(b"\x89HDF\r\n" + bytes(range(200)))
    same = tmp_path / "sub" / "n.h5"
    same.parent.mkdir()
    shutil.copy(model, same)
    root = tmp_path / "root"
    key = tc.twin_folder(model, root)
    assert tc.twin_folder(same, root) == key and key.parent == root
    os.utime(model, (1, 1))  # touched, not changed
    assert tc.twin_folder(model, root) == key
    same.write_bytes(model.read_bytes()[:-1] + b"\x00")
    assert tc.twin_folder(same, root) != key
    monkeypatch.setattr(tc, "tool_fingerprint", lambda: "another version")
    assert tc.twin_folder(model, root) != key
    sm = tmp_path / "sm"  # a SavedModel folder: its files and their names inside it
    (sm / "variables").mkdir(parents=True)
    (sm / "saved_model.pb").write_bytes(b"pb")
    (sm / "variables" / "variables.index").write_bytes(b"ix")
    k1 = tc.twin_folder(sm, root)
    (sm / "variables" / "variables.index").rename(sm / "variables" / "renamed.index")
    assert tc.twin_folder(sm, root) != k1
