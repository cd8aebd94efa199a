"""Session paths: saved absolute (relative ones mean the saving process's working directory),
and relative paths in a file resolve against the session file's folder, never the reader's
working directory."""

from __future__ import annotations

import json
import os

from inspector.core.state.session import load_session, save_session


def _state(models: str, source: str) -> dict:
    return {
        "models": {"float": {"path": f"{models}/f.tflite", "size": None, "sha256": None},
                   "quant": {"path": f"{models}/q.tflite", "size": None, "sha256": None}},
        "inputs": {"samples": {"count": 2, "seed": 0, "source": source, "normalization": None}},
        "requantize_plans": [{"name": "v0", "path": f"{models}/q.tflite", "float_model": f"{models}/f.tflite"}],
        "results": {"compare": {"float": f"{models}/f.tflite", "quant": f"{models}/q.tflite", "layers": []}},
    }  # fmt: skip


def test_relative_paths_resolve_against_the_session_folder(tmp_path, monkeypatch):
    (tmp_path / "s").mkdir()
    session = tmp_path / "s" / "x.tqi.json"
    session.write_text(json.dumps({"schema_version": 3, **_state("../m", "../m/in.npz")}))
    monkeypatch.chdir("/")
    st = load_session(session)
    m = str(tmp_path / "m")
    assert st["models"]["float"]["path"] == f"{m}/f.tflite" and st["models"]["quant"]["path"] == f"{m}/q.tflite"
    assert st["requantize_plans"][0]["path"] == f"{m}/q.tflite" and st["requantize_plans"][0]["float_model"] == f"{m}/f.tflite"
    assert st["inputs"]["samples"]["source"] == f"{m}/in.npz"
    assert st["results"]["compare"]["float"] == f"{m}/f.tflite" and st["results"]["compare"]["quant"] == f"{m}/q.tflite"


def test_saved_paths_are_absolute_and_the_callers_state_is_untouched(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    state = _state("m", "m/in.npz")
    before = json.loads(json.dumps(state))
    out = save_session(tmp_path / "y.tqi.json", state)
    assert state == before  # the caller's dicts are not rewritten
    m = os.path.join(str(tmp_path), "m")
    saved = json.loads((tmp_path / "y.tqi.json").read_text())
    for d in (out, saved):
        assert d["models"]["quant"]["path"] == f"{m}/q.tflite"
        assert d["requantize_plans"][0]["path"] == f"{m}/q.tflite"
        assert d["inputs"]["samples"]["source"] == f"{m}/in.npz"
        assert d["results"]["compare"]["quant"] == f"{m}/q.tflite"
