"""State of the requantize loop (the versions of model B) and its worker-thread entry points.

The thread functions run in a `Worker` thread and hand the real work to the worker process
(`core.isolation.run_isolated` + `core.requant_jobs`), translating its progress
`(done, total, text)` into the Worker's `progress(fraction, text)`, whose cancel flag the
worker process polls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspector.core.compare import CompareOptions
from inspector.core.compare_result import ComparisonResult
from inspector.core.isolation import run_isolated
from inspector.core.requant_jobs import VersionRun, requantize_job, suggest_job
from inspector.core.requant_plan import Plan


def same_file(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


@dataclass
class Version:
    """One model B of the loop: the opened model (v0) or one produced here."""

    number: int
    name: str
    path: str
    float_path: str
    kind: str  # "opened" | "requantized" | "suggested"
    plan: Plan | None = None
    recipe: list[dict[str, Any]] | None = None
    notes: list[str] = field(default_factory=list)
    size_bytes: int = 0
    base: str = ""
    comparison: ComparisonResult | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "path": self.path, "float_model": self.float_path, "kind": self.kind,
            "plan": self.plan.to_json() if self.plan is not None else None,
            "recipe": self.recipe, "notes": self.notes, "base": self.base,
        }  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any], number: int, float_path: str) -> Version:
        plan = Plan.from_json(d["plan"]) if isinstance(d.get("plan"), dict) else None
        return cls(number, str(d.get("name") or f"v{number}"), str(d["path"]), str(d.get("float_model") or float_path),
                   str(d.get("kind") or "requantized"), plan, d.get("recipe"), list(d.get("notes") or []),
                   base=str(d.get("base") or ""))  # fmt: skip


def _relay(progress):
    def on_progress(done: float, total: float | None = None, text: str = "") -> None:
        if progress.cancelled:
            return  # the worker process learns it through cancel(); keep reading its replies
        progress(done / total if total else None, text)

    return on_progress


def requant_thread(float_path: str, quant_path: str, plan: Plan, options: CompareOptions, out_path: str,
                   protect: list[str], with_baseline: bool, progress) -> VersionRun:  # fmt: skip
    return run_isolated(
        requantize_job, float_path, quant_path, plan, options, out_path, protect, with_baseline,
        progress=_relay(progress), cancel=lambda: progress.cancelled,
        step="requantizing (calibrating and quantizing the float model)", models=(float_path,),
    )  # fmt: skip


def suggest_thread(float_path: str, quant_path: str, target: float | None, suggest_options: Any,
                   options: CompareOptions, out_path: str, protect: list[str], progress) -> Any:  # fmt: skip
    return run_isolated(
        suggest_job, float_path, quant_path, target, suggest_options, options, out_path, protect,
        progress=_relay(progress), cancel=lambda: progress.cancelled,
        step="suggesting layers (requantizing and comparing candidates)", models=(float_path, quant_path),
    )  # fmt: skip
