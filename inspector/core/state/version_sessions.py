"""The versions of model B in a session file (`requantize_plans`): each version's plan, recipe
and notes (`Version.to_json`) plus, under "comparison", the comparison it had, so a restored
session shows every version's figures and deltas without re-running them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.compare.result import ComparisonResult
from inspector.core.state.app_state import AppState, same_file
from inspector.core.state.versions import Version, file_size
from inspector.core.tflite.litertlm import split_address


def session_versions(state: AppState) -> list[dict[str, Any]]:
    """Every version (v0 included) as a session holds it, with its comparison when it has one."""
    return [_version_json(v) for v in state.versions]


def session_shelf(state: AppState) -> list[dict[str, Any]]:
    """The versions made for other pairs (`AppState.shelved`), each list as `session_versions`
    writes the open pair's, with the version that was model B."""
    out = []
    for versions, current, _ref in state.shelved:
        cur = versions[current].path if current is not None and 0 <= current < len(versions) else versions[0].path
        out.append({"versions": [_version_json(v) for v in versions], "current": cur})
    return out


def _version_json(v: Version) -> dict[str, Any]:
    d = v.to_json()
    if v.comparison is not None:
        d["comparison"] = v.comparison.to_json(include_per_sample=True)
    return d


def restore_shelf(state: AppState, raw: Any) -> int:
    """Put a session's shelved versions back on the state's shelf (those whose files still exist;
    a list needs more than its v0); returns how many lists came back."""
    n = 0
    for entry in raw if isinstance(raw, list) else []:
        plans = [d for d in (entry.get("versions") if isinstance(entry, dict) else None) or [] if isinstance(d, dict)]
        if not plans or not plans[0].get("float_model"):
            continue
        try:
            versions, _missing = restore_versions(plans, str(plans[0]["float_model"]), str(entry.get("current") or ""), None)
        except (KeyError, TypeError, ValueError):
            continue
        if len(versions) > 1 and not any(_same_list(versions, vs) for vs, _c, _r in state.shelved):
            cur = next((i for i, v in enumerate(versions) if same_file(v.path, str(entry.get("current") or ""))), 0)
            state.shelved.append((versions, cur, None))
            n += 1
    return n


def _same_list(a: list[Version], b: list[Version]) -> bool:
    return same_file(a[0].path, b[0].path) and same_file(a[0].float_path, b[0].float_path)


def _comparison(d: dict[str, Any], v: Version) -> ComparisonResult | None:
    """The saved comparison of `v`, if it is one of v's file against its float model (else None)."""
    raw = d.get("comparison")
    if not isinstance(raw, dict):
        return None
    try:
        r = ComparisonResult.from_json(raw)
    except (KeyError, TypeError, ValueError):
        return None  # damaged: the version is compared again when shown
    return r if same_file(r.quant_path, v.path) and same_file(r.float_path, v.float_path) else None


def restore_versions(plans: list[dict[str, Any]], float_path: str, quant_path: str,
                     opened: Version | None) -> tuple[list[Version], list[str]]:  # fmt: skip
    """(versions whose files still exist, names of those whose file is gone). Model B (`quant_path`)
    is always among them: `opened` (its v0) is put first when the session does not list it."""
    restored: list[Version] = []
    missing: list[str] = []
    for d in plans:
        if not isinstance(d, dict) or not d.get("path"):
            continue
        if not Path(split_address(d["path"])[0]).is_file():  # a bundle section 'X.litertlm#N': the bundle
            missing.append(str(d.get("name") or d["path"]))
        elif not any(same_file(v.path, d["path"]) for v in restored):
            v = Version.from_json(d, len(restored), float_path)
            v.size_bytes = file_size(v.path)
            v.comparison = _comparison(d, v)
            restored.append(v)
    if restored and not any(same_file(v.path, quant_path) for v in restored) and opened is not None:
        restored.insert(0, opened)
    for i, v in enumerate(restored):
        v.number = i
    return restored, missing
