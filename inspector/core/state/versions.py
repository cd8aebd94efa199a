"""The versions of model B made by the requantize loop, typed, Qt-free (held by `AppState`).

v0 is the quantized model the user opened; every requantize run, edit or applied suggestion
adds one. Which version is model B now (`current`) and which one it is measured against
(`reference`: the baseline series and the "before" of the deltas) is state, saved in sessions
with each version's comparison, so a restored session shows its figures without re-running.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.result import ComparisonResult
from inspector.core.requantize.choices import original_name
from inspector.core.requantize.plan import Plan, infer_base
from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.tflite.model import Model


@dataclass
class Version(JsonRecord):
    """One model B of the loop: the opened model (v0) or one produced here. JSON (sessions): its
    number is its place in the list, its size and comparison are measured again (`version_sessions`)."""

    number: int = json_field(skip=True)
    name: str = json_field()
    path: str = json_field()
    float_path: str = json_field(key="float_model")
    kind: str = json_field()  # "opened" | "edited" | "recalibrated" | "requantized" | "suggested"
    plan: Plan | SurgicalPlan | None = None  # SurgicalPlan: an edit of the previous model B
    recipe: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)
    size_bytes: int = json_field(default=0, skip=True)
    base: str = ""
    comparison: ComparisonResult | None = json_field(default=None, skip=True)
    edited_ops: tuple[int, ...] = ()  # surgical: op indices of the model B it was made from
    source: str = ""  # the model B it was made from (edited, or whose ranges seeded the quantizer)

    @property
    def surgical(self) -> bool:
        return isinstance(self.plan, SurgicalPlan)

    @classmethod
    def from_json(cls, d: Mapping[str, Any], number: int = 0, float_path: str = "") -> Version:
        """Hand-written: the plan is one of two types (by its "route"), the number and the float
        model come from the session, and older sessions' nulls read as defaults."""
        raw = d.get("plan")
        plan: Plan | SurgicalPlan | None = None
        if isinstance(raw, dict):
            plan = SurgicalPlan.from_json(raw) if raw.get("route") == "surgical" else Plan.from_json(raw)
        return cls(number, str(d.get("name") or f"v{number}"), str(d["path"]), str(d.get("float_model") or float_path),
                   str(d.get("kind") or "requantized"), plan, d.get("recipe"), list(d.get("notes") or []),
                   base=str(d.get("base") or ""), edited_ops=tuple(int(i) for i in d.get("edited_ops") or ()),
                   source=str(d.get("source") or ""))  # fmt: skip


def file_size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def opened_version(float_path: str, quant: Model) -> Version:
    """v0: the quantized model as the user opened it (its scheme inferred from its tensors)."""
    base = infer_base(quant)
    return Version(0, original_name(base), quant.path, float_path, "opened", base=base, size_bytes=file_size(quant.path))
