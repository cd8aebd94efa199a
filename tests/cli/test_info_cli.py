"""`tflite-inspector info`: JSON output and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inspector.core.tflite.model import Model


@pytest.mark.parametrize("name", ["int8", "custom_op", "float16", "sparse", "stateful_int8", "no_signature", "multi_subgraph"])
def test_info_json_cli(fixture_path, name, tmp_path):
    path = fixture_path(name)
    out = tmp_path / "info.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(path), "--json", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["path"] == str(path) and data["size_bytes"] == path.stat().st_size
    model = Model(path)
    for sg_json, sg in zip(data["subgraphs"], model.subgraphs, strict=True):
        assert sg_json["inputs"] == list(sg.inputs) and sg_json["outputs"] == list(sg.outputs)
        for tj, t in zip(sg_json["tensors"], sg.tensors, strict=True):
            assert (tj["index"], tj["name"], tj["dtype"], tj["shape"]) == (t.index, t.name, t.dtype, list(t.shape))
            assert tj["is_constant"] == t.is_constant
            if t.quantization:
                assert tj["quantization"]["scales"] == list(t.quantization.scales)
        assert [o["type"] for o in sg_json["ops"]] == [o.type for o in sg.ops]
    assert [s["key"] for s in data["signatures"]] == [s.key for s in model.signatures]


def test_info_json_stdout(fixture_path):
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(fixture_path("int8")), "--json", "-"], capture_output=True, text=True)
    assert r.returncode == 0
    data = json.loads(r.stdout)
    t = [t for t in data["subgraphs"][0]["tensors"] if t["quantization"]]
    assert t and all(isinstance(z, int) for x in t for z in x["quantization"]["zero_points"])


@pytest.mark.parametrize(
    "content, needle",
    [(b"", "empty"), (b"hello world, not a model", "TFL3"), (None, "truncated")],
)
def test_info_bad_input_exit_2(fixture_path, tmp_path, content, needle):
    p = tmp_path / "bad.tflite"
    if content is None:
        content = fixture_path("int8").read_bytes()[:2000]
    p.write_bytes(content)
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(p)], capture_output=True, text=True)
    assert r.returncode == 2
    assert str(p) in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert needle.lower() in r.stderr.lower() or "malformed" in r.stderr.lower() or "past the end" in r.stderr


def test_missing_file_exit_2(tmp_path):
    r = subprocess.run([sys.executable, "-m", "inspector", "info", str(tmp_path / "nope.tflite")], capture_output=True, text=True)
    assert r.returncode == 2 and "nope.tflite" in r.stderr and "Traceback" not in r.stderr
