"""Session files (`.tqi.json`): the open models, inputs, selection, plans and results.

Schema (version 2):
    {"schema_version": 2, "app": "tflite-inspector", "app_version": str, "saved_at": ISO time,
     "models": {"float": MODEL | null, "quant": MODEL | null},
     "inputs": {...}, "selection": {...}, "requantize_plans": [{...}], "results": {...}}
    MODEL = {"path": str, "size": int | null, "sha256": 16 hex digits | null}
`inputs`, `selection`, each plan and `results` (e.g. results["compare"] = a compare JSON)
are JSON objects owned by the features that write them. Size and hash prefix let a restore
tell that a model file changed since the session was saved (`model_changes`).

Version 1 (the first format) is migrated on load:
    {"schema_version": 1, "float_model": str, "quant_model": str, "inputs_path": str,
     "num_samples": int, "selected_tensor": str, "compare": {...}}
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
from inspector.core.errors import InputError
from inspector.core.writing import atomic_write_text, to_json_text

SCHEMA_VERSION = 2
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


def model_fingerprint(path: str | os.PathLike[str]) -> dict:
    p = Path(path).resolve()
    try:
        return {"path": str(p), "size": p.stat().st_size, "sha256": file_sha256_prefix(p)}
    except OSError:
        return {"path": str(p), "size": None, "sha256": None}


def model_changes(state: dict) -> dict[str, str]:
    """role -> why the model cannot be restored as saved ("missing", "changed ..."); empty if all fine."""
    out = {}
    for role, m in state.get("models", {}).items():
        if not m:
            continue
        p = Path(m["path"])
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


# ---------------------------------------------------------------------- save / load
def new_state() -> dict:
    return {
        "schema_version": SCHEMA_VERSION,
        "models": {r: None for r in MODEL_ROLES},
        "inputs": {},
        "selection": {},
        "requantize_plans": [],
        "results": {},
    }


def save_session(path: str | os.PathLike[str], state: dict) -> dict:
    """Write `state` atomically; model entries may be plain paths (fingerprinted here). Returns what was written."""
    out = new_state()
    for key in ("inputs", "selection", "requantize_plans", "results"):
        if key in state:
            out[key] = state[key]
    for role, m in (state.get("models") or {}).items():
        if m is None:
            out["models"][role] = None
        elif isinstance(m, str | os.PathLike):
            out["models"][role] = model_fingerprint(m)
        else:
            out["models"][role] = dict(m)
    out["app"], out["app_version"] = "tflite-inspector", __version__
    out["saved_at"] = _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")
    _check(out, str(path))
    try:
        text = to_json_text(out)
    except (TypeError, ValueError) as e:
        raise SessionFileError(f"cannot save the session: {e}", str(path)) from None
    atomic_write_text(path, text + "\n")
    return out


def load_session(path: str | os.PathLike[str]) -> dict:
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
    state = new_state()
    state.update(data)
    _check(state, where)
    return state


def _migrate_v1(d: dict, where: str) -> dict:
    def model(key: str) -> dict | None:
        p = d.get(key)
        if p is None:
            return None
        if not isinstance(p, str):
            raise SessionFileError(f"'{key}' should be a path (schema 1)", where)
        return {"path": p, "size": None, "sha256": None}

    inputs: dict[str, Any] = {}
    if d.get("inputs_path"):
        src = str(d["inputs_path"])
        inputs = {"source": "npz" if src.endswith((".npz", ".npy")) else "folder", "path": src}
    if "num_samples" in d:
        inputs["count"] = d["num_samples"]
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


def _check(s: dict, where: str) -> None:
    def bad(key: str, want: str) -> SessionFileError:
        return SessionFileError(f"session key '{key}' should be {want}", where)

    for key in ("inputs", "selection", "results"):
        if not isinstance(s.get(key), dict):
            raise bad(key, "an object")
    if not isinstance(s.get("requantize_plans"), list) or not all(isinstance(p, dict) for p in s["requantize_plans"]):
        raise bad("requantize_plans", "a list of objects")
    if not isinstance(s.get("models"), dict):
        raise bad("models", "an object")
    for role, m in s["models"].items():
        if m is None:
            continue
        if not isinstance(m, dict) or not isinstance(m.get("path"), str):
            raise bad(f"models.{role}", "an object with a 'path'")
        if m.get("size") is not None and (not isinstance(m["size"], int) or m["size"] < 0):
            raise bad(f"models.{role}.size", "a byte count")
        if m.get("sha256") is not None and not (isinstance(m["sha256"], str) and all(c in "0123456789abcdef" for c in m["sha256"])):
            raise bad(f"models.{role}.sha256", "a hex string")
