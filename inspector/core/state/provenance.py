"""Where a version of model B comes from, for its report (issue 26 §12): the version (number,
name, kind), the original model B the user opened, the model it was made from, the plan (the
edits and their ops, or the quantizer's scheme and overrides), the samples it calibrated on
and the chain of versions from the original to it. A report of an edited model then names all
of that, not only a file in the versions cache.
"""

from __future__ import annotations

from typing import Any

from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.state.app_state import same_file
from inspector.core.state.versions import Version


def _by_path(versions: list[Version], path: str) -> Version | None:
    return next((v for v in versions if v.path and path and same_file(v.path, path)), None)


def _chain(versions: list[Version], v: Version) -> list[Version]:
    """v0 ... v, following each version's `source` (the model B it was made from)."""
    out, seen = [v], {id(v)}
    while out[-1].source:
        prev = _by_path(versions, out[-1].source)
        if prev is None or id(prev) in seen:
            break
        out.append(prev)
        seen.add(id(prev))
    return out[::-1]


def _samples(v: Version) -> dict[str, Any] | None:
    if isinstance(v.plan, SurgicalPlan):
        s = v.plan.samples
        return {"description": s.describe(), "random": s.source is None, **s.to_json()}
    if v.comparison is not None:
        return {"description": v.comparison.inputs, "random": v.comparison.inputs.startswith("random"),
                "count": v.comparison.samples, "seed": v.comparison.seed}  # fmt: skip
    return None


def _edits(v: Version) -> list[dict[str, Any]]:
    if isinstance(v.plan, SurgicalPlan):
        return [{"edit": e.kind, "ops": list(e.ops), **({"calibration": e.calibration} if e.calibration else {})}
                for e in v.plan.edits]  # fmt: skip
    if v.plan is not None:
        return [{"edit": o.treatment, "selector": o.selector} for o in v.plan.overrides]
    return []


def version_provenance(versions: list[Version], index: int | None) -> dict[str, Any] | None:
    """The provenance of version `index` (None for the opened model v0 or no version)."""
    v = versions[index] if index is not None and 0 <= index < len(versions) else None
    if v is None or v.kind == "opened":
        return None
    chain = _chain(versions, v)
    original = versions[0] if versions and versions[0].kind == "opened" else chain[0]
    made_from = _by_path(versions, v.source) if v.source else None
    return {
        "version": v.name,
        "number": v.number,
        "kind": v.kind,
        "path": v.path,
        "float_model": v.float_path,
        "original_b": original.path,
        "made_from": v.source or original.path,
        "made_from_version": made_from.name if made_from is not None else None,
        "route": "surgical" if isinstance(v.plan, SurgicalPlan) else "quantizer",
        "edits": _edits(v),
        "edited_ops": list(v.edited_ops),
        "plan": v.plan.to_json() if v.plan is not None else None,
        "samples": _samples(v),
        "notes": list(v.notes),
        "chain": [{"version": c.name, "kind": c.kind, "path": c.path} for c in chain],
    }
