"""State of the requantize loop (the versions of model B) and its worker-thread entry points.

The thread functions run in a `Worker` thread and hand the real work to the worker process
(`core.runtime.worker.run_isolated` + `core.requantize.jobs`), passing the Worker's TaskState
on: the worker process reports to it and learns of a cancel through it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.result import ComparisonResult
from inspector.core.progress import TaskState
from inspector.core.requantize.jobs import (
    EditRun,
    QuantizerRuns,
    quantizer_versions_job,
    suggest_job,
    surgical_suggest_job,
    surgical_version_job,
)
from inspector.core.requantize.plan import Plan
from inspector.core.requantize.surgical_plan import SurgicalPlan
from inspector.core.runtime.worker import run_isolated


@dataclass
class Version:
    """One model B of the loop: the opened model (v0) or one produced here."""

    number: int
    name: str
    path: str
    float_path: str
    kind: str  # "opened" | "edited" | "recalibrated" | "requantized" | "suggested"
    plan: Plan | SurgicalPlan | None = None  # SurgicalPlan: an edit of the previous model B
    recipe: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)
    size_bytes: int = 0
    base: str = ""
    comparison: ComparisonResult | None = None
    edited_ops: tuple[int, ...] = ()  # surgical: op indices of the model B it was made from
    source: str = ""  # the model B it was made from (edited, or whose ranges seeded the quantizer)

    @property
    def surgical(self) -> bool:
        return isinstance(self.plan, SurgicalPlan)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "path": self.path, "float_model": self.float_path, "kind": self.kind,
            "plan": self.plan.to_json() if self.plan is not None else None,
            "recipe": self.recipe, "notes": self.notes, "base": self.base, "edited_ops": list(self.edited_ops),
            "source": self.source,
        }  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any], number: int, float_path: str) -> Version:
        raw = d.get("plan")
        plan: Plan | SurgicalPlan | None = None
        if isinstance(raw, dict):
            plan = SurgicalPlan.from_json(raw) if raw.get("route") == "surgical" else Plan.from_json(raw)
        return cls(number, str(d.get("name") or f"v{number}"), str(d["path"]), str(d.get("float_model") or float_path),
                   str(d.get("kind") or "requantized"), plan, d.get("recipe"), list(d.get("notes") or []),
                   base=str(d.get("base") or ""), edited_ops=tuple(int(i) for i in d.get("edited_ops") or ()),
                   source=str(d.get("source") or ""))  # fmt: skip


def suggest_thread(float_path: str, quant_path: str, target: float | None, suggest_options: Any,
                   options: CompareOptions, out_path: str, protect: list[str], task: TaskState) -> Any:  # fmt: skip
    return run_isolated(
        suggest_job, float_path, quant_path, target, suggest_options, options, out_path, protect,
        task=task,
        step="suggesting layers (requantizing and comparing candidates)", models=(float_path, quant_path),
    )  # fmt: skip


def surgical_thread(float_path: str, quant_path: str, plan: SurgicalPlan, options: CompareOptions, out_path: str,
                    protect: list[str], with_baseline: bool, task: TaskState) -> EditRun:  # fmt: skip
    return run_isolated(
        surgical_version_job, float_path, quant_path, plan, options, out_path, protect, with_baseline,
        task=task,
        step="editing model B (surgical edits, checked in LiteRT)", models=(float_path, quant_path),
    )  # fmt: skip


def quantizer_thread(float_path: str, quant_path: str, plan: Plan, options: CompareOptions, out_unchanged: str,
                     out_path: str, protect: list[str], task: TaskState) -> QuantizerRuns:  # fmt: skip
    return run_isolated(
        quantizer_versions_job, float_path, quant_path, plan, options, out_unchanged, out_path, protect,
        task=task,
        step="requantizing (calibrating and quantizing the float model)", models=(float_path, quant_path),
    )  # fmt: skip


def surgical_suggest_thread(float_path: str, quant_path: str, target: float | None, suggest_options: Any,
                            out_path: str, protect: list[str], task: TaskState) -> Any:  # fmt: skip
    return run_isolated(
        surgical_suggest_job, float_path, quant_path, target, suggest_options, out_path, protect,
        task=task,
        step="suggesting edits of model B (editing and comparing candidates)", models=(float_path, quant_path),
    )  # fmt: skip
