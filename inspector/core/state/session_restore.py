"""A loaded session file turned into typed parts, Qt-free: what the GUI applies once the session's
models are open (options first: their signature decides which subgraph the selection's indices
address; then the selection, the versions of B, the comparison and the runtime parity), and why
any part was left out. The GUI only opens the files and applies these parts in that order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.core.compare.options import CompareOptions
from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.core.compare.result import ComparisonResult
from inspector.core.errors import InspectorError
from inspector.core.state.app_state import default_reference, same_file
from inspector.core.state.session import model_changes
from inspector.core.state.version_sessions import restore_versions
from inspector.core.state.versions import Version

SLOTS = {"A": "a", "B": "b"}


@dataclass(frozen=True)
class SavedSelection:
    """The selection as saved: an op and/or tensor index in the `origin` model's main subgraph."""

    origin: str = "A"
    op: int | None = None
    tensor: int | None = None
    channel: int | None = None

    @classmethod
    def from_json(cls, sel: dict[str, Any]) -> SavedSelection:
        """Hand-written (not `codec.json_record`): the keys are named by the origin's slot (op_a, tensor_b...)."""
        origin = o if isinstance(o := sel.get("origin"), str) and o in SLOTS else "A"
        op, tensor, ch = sel.get(f"op_{SLOTS[origin]}"), sel.get(f"tensor_{SLOTS[origin]}"), sel.get("channel")

        def as_int(v: object) -> int | None:
            return v if isinstance(v, int) and not isinstance(v, bool) else None

        return cls(origin, as_int(op), as_int(tensor), as_int(ch))


@dataclass
class SessionParts:
    options: CompareOptions | None = None
    selection: SavedSelection = SavedSelection()
    versions: list[Version] = field(default_factory=list)  # empty: keep the versions of the open pair
    current: int | None = None
    reference: int | None = None
    missing_versions: list[str] = field(default_factory=list)
    comparison: ComparisonResult | None = None
    parity: RuntimeParityResult | None = None
    problems: list[str] = field(default_factory=list)


def session_options(state: dict[str, Any], parts: SessionParts) -> None:
    inputs = state.get("inputs") or {}
    if inputs:
        try:
            parts.options = CompareOptions.from_json(inputs)
        except (InspectorError, TypeError, ValueError) as e:
            parts.problems.append(f"input settings not restored ({e})")


def session_parts(state: dict[str, Any], float_path: str | None, quant_path: str | None,
                  opened: Version | None = None) -> SessionParts:  # fmt: skip
    """What to apply of `state` to the models now open (A `float_path`, B `quant_path`);
    `opened`: the open B's v0, kept first when the session does not list it."""
    parts = SessionParts(selection=SavedSelection.from_json(state.get("selection") or {}))
    session_options(state, parts)
    changed = model_changes(state)
    plans = [d for d in state.get("requantize_plans") or [] if isinstance(d, dict)]
    if changed:  # a model changed since: the versions' saved figures may not describe it
        plans = [{k: v for k, v in d.items() if k != "comparison"} for d in plans]
    if plans and float_path is not None and quant_path is not None:
        try:
            versions, parts.missing_versions = restore_versions(plans, float_path, quant_path, opened)
        except (InspectorError, KeyError, TypeError, ValueError) as e:
            parts.problems.append(f"requantize plans not restored ({e})")
            versions = []
        cur = next((i for i, v in enumerate(versions) if same_file(v.path, quant_path)), None)
        if cur is not None:
            parts.versions, parts.current = versions, cur
            saved_ref = (state.get("versions") or {}).get("reference")
            ref = next((i for i, v in enumerate(versions) if saved_ref and same_file(v.path, saved_ref)), None)
            parts.reference = ref if ref is not None and ref != cur else default_reference(versions, cur)
    results = state.get("results") or {}
    comp = results.get("compare")
    if comp:
        if changed:
            parts.problems.append("the saved comparison result was not restored because a model changed; run the comparison again")
        elif quant_path is None:
            parts.problems.append("the saved comparison result was not restored: model B is not open")
        else:
            try:
                parts.comparison = ComparisonResult.from_json(comp)
            except (KeyError, TypeError, ValueError) as e:
                parts.problems.append(f"the saved comparison result is damaged and was not restored ({type(e).__name__}: {e})")
    if results.get("parity"):
        parts.parity = _parity(results["parity"], quant_path, bool(changed), parts.problems)
    return parts


def _parity(saved: dict[str, Any], quant_path: str | None, changed: bool, problems: list[str]) -> RuntimeParityResult | None:
    """The saved runtime parity of B, if it describes the model B now open; else why not."""
    try:
        result = RuntimeParityResult.from_json(saved)
    except (KeyError, TypeError, ValueError) as e:
        problems.append(f"the saved runtime parity is damaged and was not restored ({type(e).__name__}: {e})")
        return None
    if quant_path is None or not same_file(result.model, quant_path):
        problems.append("the saved runtime parity was not restored: its model B is not open")
        return None
    if changed:
        problems.append("the saved runtime parity was not restored because a model changed; run it again")
        return None
    return result
