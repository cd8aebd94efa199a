"""Session files (`.tqi.json`): the serialized `AppState` (models, inputs, selection, versions, results).

Schema (version 3):
    {"schema_version": 3, "app": "tflite-inspector", "app_version": str, "saved_at": ISO time,
     "models": {"float": MODEL | null, "quant": MODEL | null},
     "inputs": CompareOptions.to_json() (its "samples" a SampleSettings.to_json()),
     "selection": {"origin", "op_a", "op_b", "tensor_a", "tensor_b", "channel", "tensor_name_a", "tensor_name_b"},
     "requantize_plans": [the versions of B, Version.to_json() and "comparison": a compare JSON],
     "versions": {"current": path of model B's version, "reference": path of the version it is measured against},
     "shelved_versions": [{"versions": [versions made for another pair, as requantize_plans], "current": path}],
     "results": {"compare": a compare JSON, "parity": a compare-runtimes JSON of B},
     "keras": KERAS (optional: model A is a Keras / SavedModel model)}
    KERAS = {"source": path of the .h5 / .keras / SavedModel folder, "float_twin": the cached
             twin model A is, "comparison": the Keras-vs-B compare JSON | null}
    (the twin is a cache file: a restore reopens the source through the Keras feature; a
    session without "keras" loads as before)
    MODEL = {"path": str, "size": int | null, "sha256": 16 hex digits | null}
    (a `.litertlm` section is saved as its address 'BUNDLE.litertlm#N'; size and hash are the bundle's)
`session_from_state(state)` builds it. Size and hash prefix let a restore tell that a model
file changed since the session was saved (`model_changes`).

Version 2 (flat inputs: {"samples": count, "seed", "inputs": path, "normalization", ...}) is
migrated on load to the nested inputs of version 3.

Version 1 (the first format) is migrated on load:
    {"schema_version": 1, "float_model": str, "quant_model": str, "inputs_path": str,
     "num_samples": int, "selected_tensor": str, "compare": {...}}
Paths are saved absolute; a relative path in a file (hand-written, or an old session) is
resolved against the session file's folder, never the working directory.
Writes are atomic (temp file + rename); reading never modifies the file.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from inspector import __version__
from inspector.core.compare.options import CompareOptions
from inspector.core.errors import InputError
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import AppState
from inspector.core.state.version_sessions import session_shelf, session_versions
from inspector.core.tflite.litertlm import split_address
from inspector.core.writing import atomic_write_text, to_json_text

SCHEMA_VERSION = 3
SUFFIX = ".tqi.json"
MODEL_ROLES = ("float", "quant")
_HASH_CACHE: dict[tuple[str, int, int], str] = {}


class SessionFileError(InputError):
    """A session file that cannot be read: corrupt, truncated, from a newer version, wrong shape."""


# ---------------------------------------------------------------------- model fingerprints
def file_sha256_prefix(path: str | os.PathLike[str], chars: int = 16) -> str:
    """Hex prefix of the file's SHA-256 (cached by path, size and modification time)."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if key not in _HASH_CACHE:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _HASH_CACHE[key] = h.hexdigest()
    return _HASH_CACHE[key][:chars]


def _address(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """(the file, the resolved path as saved): a bundle section 'X.litertlm#N' keeps its '#N'
    while size and hash are the bundle file's."""
    file, index = split_address(path)
    p = Path(file).resolve()
    return p, str(p) if index is None else f"{p}#{index}"


def model_fingerprint(path: str | os.PathLike[str]) -> dict[str, Any]:
    p, saved = _address(path)
    try:
        return {"path": saved, "size": p.stat().st_size, "sha256": file_sha256_prefix(p)}
    except OSError:
        return {"path": saved, "size": None, "sha256": None}


def model_changes(state: dict[str, Any]) -> dict[str, str]:
    """role -> why the model cannot be restored as saved ("missing", "changed ..."); empty if all fine."""
    out = {}
    for role, m in state.get("models", {}).items():
        if not m:
            continue
        p = _address(m["path"])[0]
        if not p.is_file():
            out[role] = f"{p} no longer exists"
            continue
        size = p.stat().st_size
        if m.get("size") is None:
            continue  # saved by version 1: nothing to compare against
        if size != m["size"]:
            out[role] = f"{p} changed since the session was saved (size {m['size']} -> {size} bytes)"
        elif m.get("sha256") and file_sha256_prefix(p, len(m["sha256"])) != m["sha256"]:
            out[role] = f"{p} changed since the session was saved (same size, different content)"
    return out


# ---------------------------------------------------------------------- file paths
def _absolute(path: Any, base: str) -> Any:
    """`path` made absolute against `base` (strings only; a bundle section 'X.litertlm#N' too)."""
    if not isinstance(path, str) or not path or os.path.isabs(path):
        return path
    return os.path.normpath(os.path.join(base, path))


def _map_paths(state: dict[str, Any], base: str) -> None:
    """Every file path a session holds (models, versions of B, the samples file or folder) made
    absolute against `base`, in place: a session must open from any working directory."""
    for m in (state.get("models") or {}).values():
        if isinstance(m, dict):
            m["path"] = _absolute(m.get("path"), base)
    for v in state.get("requantize_plans") or []:
        if isinstance(v, dict):
            for key in ("path", "float_model"):
                if key in v:
                    v[key] = _absolute(v[key], base)
            comp = v.get("comparison")
            if isinstance(comp, dict):  # a version's saved comparison names the files it compared
                v["comparison"] = comp = dict(comp)
                for key in ("float", "quant"):
                    if key in comp:
                        comp[key] = _absolute(comp[key], base)
    for entry in state.get("shelved_versions") or []:
        if isinstance(entry, dict):
            entry["current"] = _absolute(entry.get("current"), base)
            for v in entry.get("versions") or []:
                if isinstance(v, dict):
                    for key in ("path", "float_model"):
                        if key in v:
                            v[key] = _absolute(v[key], base)
    chosen = state.get("versions")
    if isinstance(chosen, dict):
        state["versions"] = {k: _absolute(v, base) for k, v in chosen.items()}
    samples = (state.get("inputs") or {}).get("samples")
    if isinstance(samples, dict) and "source" in samples:
        samples["source"] = _absolute(samples["source"], base)
    comp = (state.get("results") or {}).get("compare")
    if isinstance(comp, dict):  # the saved result names the files it compared
        for key in ("float", "quant"):
            if key in comp:
                comp[key] = _absolute(comp[key], base)
    parity = (state.get("results") or {}).get("parity")
    if isinstance(parity, dict) and "model" in parity:
        parity["model"] = _absolute(parity["model"], base)
    keras = state.get("keras")
    if isinstance(keras, dict):
        for key in ("source", "float_twin"):
            if key in keras:
                keras[key] = _absolute(keras[key], base)


# ---------------------------------------------------------------------- save / load
def new_state() -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "models": {r: None for r in MODEL_ROLES},
        "inputs": {},
        "selection": {},
        "requantize_plans": [],
        "results": {},
    }


def save_session(path: str | os.PathLike[str], state: dict[str, Any]) -> dict[str, Any]:
    """Write `state` atomically; model entries may be plain paths (fingerprinted here). Returns what was written."""
    out = new_state()
    for key in ("inputs", "selection", "requantize_plans", "results", "versions", "keras", "shelved_versions"):
        if key in state and (key != "keras" or state[key] is not None):
            out[key] = state[key]
    out["inputs"] = json.loads(json.dumps(out["inputs"])) if isinstance(out["inputs"], dict) else out["inputs"]
    if isinstance(out["results"], dict):  # paths are rewritten below: copies, not the caller's
        out["results"] = {k: dict[str, Any](v) if isinstance(v, dict) else v for k, v in out["results"].items()}
    if isinstance(out.get("keras"), dict):
        out["keras"] = dict(out["keras"])
    if isinstance(out["requantize_plans"], list):
        out["requantize_plans"] = [dict(v) if isinstance(v, dict) else v for v in out["requantize_plans"]]
    for role, m in (state.get("models") or {}).items():
        if m is None:
            out["models"][role] = None
        elif isinstance(m, str | os.PathLike):
            out["models"][role] = model_fingerprint(m)
        else:
            out["models"][role] = dict(m)
    _map_paths(out, os.getcwd())  # relative paths mean the working directory of this process
    out["app"], out["app_version"] = "tflite-inspector", __version__
    out["saved_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    _check(out, str(path))
    try:
        text = to_json_text(out)
    except (TypeError, ValueError) as e:
        raise SessionFileError(f"cannot save the session: {e}", str(path)) from None
    atomic_write_text(path, text + "\n")
    return out


def load_session(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read, migrate and check a session file; raise SessionFileError with the reason."""
    where = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SessionFileError("not a session file (not UTF-8 text)", where) from None
    except OSError as e:
        raise SessionFileError(f"cannot read the session file ({e.strerror or e})", where) from None
    if not text.strip():
        raise SessionFileError("the session file is empty", where)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise SessionFileError(f"the session file is not valid JSON (line {e.lineno}, column {e.colno}: {e.msg}); corrupt or truncated?", where) from None
    if not isinstance(data, dict) or "schema_version" not in data:
        raise SessionFileError("not a tflite-inspector session (no schema_version)", where)
    v = data["schema_version"]
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise SessionFileError(f"invalid schema_version {v!r}", where)
    if v > SCHEMA_VERSION:
        raise SessionFileError(
            f"saved by a newer version of the app (session schema {v}); this version reads up to schema {SCHEMA_VERSION}", where
        )
    if v == 1:
        data = _migrate_v1(data, where)
    elif v == 2:
        data = _migrate_v2(data, where)
    state = new_state()
    state.update(data)
    _check(state, where)
    _map_paths(state, str(Path(path).resolve().parent))  # hand-written / old relative paths: the session's folder
    return state


def _migrate_v1(d: dict[str, Any], where: str) -> dict[str, Any]:
    def model(key: str) -> dict[str, Any] | None:
        p = d.get(key)
        if p is None:
            return None
        if not isinstance(p, str):
            raise SessionFileError(f"'{key}' should be a path (schema 1)", where)
        return {"path": p, "size": None, "sha256": None}

    samples: dict[str, Any] = {}
    if d.get("inputs_path"):
        samples["source"] = str(d["inputs_path"])
    if "num_samples" in d:
        samples["count"] = d["num_samples"]
    try:
        inputs = CompareOptions(samples=SampleSettings.from_json(samples)).to_json() if samples else {}
    except (InputError, TypeError, ValueError) as e:
        raise SessionFileError(f"invalid input settings (schema 1): {e}", where) from None
    selection = {"tensor_name": d["selected_tensor"]} if d.get("selected_tensor") else {}
    return {
        "schema_version": SCHEMA_VERSION,
        "migrated_from": 1,
        "models": {"float": model("float_model"), "quant": model("quant_model")},
        "inputs": inputs,
        "selection": selection,
        "requantize_plans": [],
        "results": {"compare": d["compare"]} if d.get("compare") is not None else {},
    }


def _migrate_v2(d: dict[str, Any], where: str) -> dict[str, Any]:
    out = dict(d, schema_version=SCHEMA_VERSION, migrated_from=2)
    inputs = d.get("inputs")
    if isinstance(inputs, dict) and inputs:
        try:
            out["inputs"] = CompareOptions.from_json(inputs).to_json()
        except (InputError, TypeError, ValueError) as e:
            raise SessionFileError(f"invalid input settings (schema 2): {e}", where) from None
    return out


def session_from_state(state: AppState) -> dict[str, Any]:
    """What a session file holds for `state` (model entries as paths; `save_session` fingerprints them)."""
    roles = {"A": "float", "B": "quant"}
    models = {role: (m.path if (m := state.models[s]) is not None else None) for s, role in roles.items()}
    sel = state.selection
    selection: dict[str, Any] = {"origin": sel.origin, "op_a": sel.op_a, "op_b": sel.op_b,
                                 "tensor_a": sel.tensor_a, "tensor_b": sel.tensor_b, "channel": state.channel}  # fmt: skip
    for slot in roles:  # names too, for a reader without the model
        m, i = state.models[slot], sel.tensor(slot)
        selection[f"tensor_name_{slot.lower()}"] = m.main.tensors[i].name if m is not None and i is not None else None
    result = state.current_comparison()
    results: dict[str, Any] = {"compare": result.to_json(include_per_sample=True)} if result is not None else {}
    if state.parity is not None:
        results["parity"] = state.parity.to_json()
    return {
        "models": models,
        "inputs": state.options.to_json(),
        "selection": selection,
        "requantize_plans": session_versions(state),
        "shelved_versions": session_shelf(state),  # versions made for other pairs (offered when reopened)
        "versions": {"current": _path_of(state, state.current), "reference": _path_of(state, state.reference)},
        "results": results,
    }


def _path_of(state: AppState, i: int | None) -> str | None:
    v = state.version(i)
    return v.path if v is not None else None


def _check(s: dict[str, Any], where: str) -> None:
    def bad(key: str, want: str) -> SessionFileError:
        return SessionFileError(f"session key '{key}' should be {want}", where)

    for key in ("inputs", "selection", "results"):
        if not isinstance(s.get(key), dict):
            raise bad(key, "an object")
    if not isinstance(s.get("requantize_plans"), list) or not all(isinstance(p, dict) for p in s["requantize_plans"]):
        raise bad("requantize_plans", "a list of objects")
    if not isinstance(s.get("models"), dict):
        raise bad("models", "an object")
    if "versions" in s and not isinstance(s["versions"], dict):
        raise bad("versions", "an object")
    if "keras" in s:
        k = s["keras"]
        if not isinstance(k, dict) or not isinstance(k.get("source"), str):
            raise bad("keras", "an object with a 'source' path")
        if k.get("comparison") is not None and not isinstance(k["comparison"], dict):
            raise bad("keras.comparison", "an object or null")
    for role, m in s["models"].items():
        if m is None:
            continue
        if not isinstance(m, dict) or not isinstance(m.get("path"), str):
            raise bad(f"models.{role}", "an object with a 'path'")
        if m.get("size") is not None and (not isinstance(m["size"], int) or m["size"] < 0):
            raise bad(f"models.{role}.size", "a byte count")
        if m.get("sha256") is not None and not (isinstance(m["sha256"], str) and all(c in "0123456789abcdef" for c in m["sha256"])):
            raise bad(f"models.{role}.sha256", "a hex string")
