"""The diagnosis' fix as a surgical plan, and what applying it changed, in words.

The diagnosis names its edits as the issue does (`weight_rounding` for MSE-fitted weight
scales); the surgical plan calls that edit `weight_mse`. Every other name is the same.
`equalize` names two ops, (producer, consumer): one edit of the pair, not one per op.
"""

from __future__ import annotations

from inspector.core.compare.diagnosis_types import Diagnosis, Fix
from inspector.core.compare.inside import SliceStats
from inspector.core.compare.result import ComparisonResult
from inspector.core.requantize.held_out import LOWERED_DB
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings
from inspector.core.text.numbers import db

PLAN_KIND = {"weight_rounding": "weight_mse"}


def plan_kind(edit: str) -> str:
    return PLAN_KIND.get(edit, edit)


def fix_plan(fix: Fix, samples: SampleSettings | None = None, signature: str | None = None) -> SurgicalPlan:
    """One surgical edit of the fix's ops (addressed `op:INDEX`, resolved); an equalize fix is one
    edit per (producer, consumer) pair of its ops (P1, C1, P2, C2, ...: a chain)."""
    if fix.edit in ("equalize", "relu6_equalize"):  # (P, C) pairs: a chain of them is one plan
        pairs = tuple(Edit(fix.edit, f"op:{p}", None, (p, c)) for p, c in zip(fix.ops[0::2], fix.ops[1::2], strict=False))
        return SurgicalPlan(pairs, samples or SampleSettings(), signature=signature)
    edits = tuple(Edit(plan_kind(fix.edit), f"op:{op}", None, (op,)) for op in fix.ops)
    return SurgicalPlan(edits, samples or SampleSettings(), signature=signature)


def diagnosed_first(kinds: list[str] | tuple[str, ...], diagnosis: Diagnosis | None) -> list[str]:
    """`kinds` with the diagnosis' edit (when among them) moved to the front."""
    if diagnosis is None or diagnosis.fix is None:
        return list(kinds)
    first = plan_kind(diagnosis.fix.edit)
    return [first, *(k for k in kinds if k != first)] if first in kinds else list(kinds)


def has_own_cause(layer: object) -> bool:
    """Does the diagnosis give the layer a cause of its own (not none, not inherited)?"""
    d = getattr(layer, "diagnosis", None)
    return d is not None and d.cause not in ("none", "inherited")


def fix_outcome(before: ComparisonResult, after: ComparisonResult, fix: Fix) -> list[str]:
    """One line per fixed op: accumulated SQNR before -> after, the cause now; then the output."""
    lines = []
    for op in fix.ops:  # an equalized producer is compared with A's output ÷ s (compare.equalized): like for like
        b = before.layer_for_op(op)
        # the same layer after the edit: by A's tensor (an edit that inserts ops moves B's indices)
        a = None if b is None else next((lay for lay in after.layers if lay.float_tensor == b.float_tensor), None)
        if b is None or a is None:
            continue
        gain = a.metrics.sqnr_db - b.metrics.sqnr_db
        cause = a.diagnosis.cause if a.diagnosis is not None else "–"
        ref = " (against the float output ÷ s)" if fix.edit in ("equalize", "relu6_equalize") and op == fix.ops[0] else ""
        lines.append(f"op {op} {a.op_type}: SQNR {db(b.metrics.sqnr_db, 2, none='–')} → {db(a.metrics.sqnr_db, 2, none='–')} dB{ref} "
                     f"({gain:+.2f} dB) after {fix.edit}; cause now: {cause}")  # fmt: skip
        lines += _part_lines(f"op {op}", b.slices, a.slices)
    if before.outputs and after.outputs:
        ob = min(o.metrics.sqnr_db for o in before.outputs)
        oa = min(o.metrics.sqnr_db for o in after.outputs)
        lines.append(f"model output SQNR {db(ob, 2, none='–')} → {db(oa, 2, none='–')} dB")
        for o_b, o_a in zip(before.outputs, after.outputs, strict=False):
            lines += _part_lines(f"output {o_b.name}", o_b.slices, o_a.slices)
    return lines


def fix_lowered(before: ComparisonResult, after: ComparisonResult) -> str | None:
    """The line saying a fix lowered the model output SQNR (beyond `held_out.LOWERED_DB`), else None."""
    if not before.outputs or not after.outputs:
        return None
    ob = min(o.metrics.sqnr_db for o in before.outputs)
    oa = min(o.metrics.sqnr_db for o in after.outputs)
    if not oa < ob - LOWERED_DB:
        return None
    return (f"The fix lowered the model output SQNR ({db(ob, 2)} → {db(oa, 2)} dB): not worth keeping. "
            "Revert makes the version it was made from model B again.")


def fix_headline(before: ComparisonResult, after: ComparisonResult) -> str:
    """The outcome in one line: the model output's SQNR before -> after and, where an output is a
    concatenation, its worst slice's (the whole tensor hides that one; issue 25)."""
    if not before.outputs or not after.outputs:
        return ""
    parts = [f"output SQNR {db(min(o.metrics.sqnr_db for o in before.outputs), 2, none='–')} → "
             f"{db(min(o.metrics.sqnr_db for o in after.outputs), 2, none='–')} dB"]  # fmt: skip
    for o_b, o_a in zip(before.outputs, after.outputs, strict=False):
        worst = _worst_part(o_b.slices, o_a.slices)
        if worst is not None:
            parts.append(f"output slice {worst[0].label} SQNR {db(worst[0].sqnr_db, 2, none='–')} → {db(worst[1].sqnr_db, 2, none='–')} dB")
    return "; ".join(parts)


def _worst_part(
    before: tuple[SliceStats, ...] | None, after: tuple[SliceStats, ...] | None
) -> tuple[SliceStats, SliceStats] | None:
    """(before, after) of the slice worst before, when both results have the same slices."""
    if not before or not after or len(before) != len(after):
        return None
    k = min(range(len(before)), key=lambda i: before[i].sqnr_db)
    return before[k], after[k]


def _part_lines(where: str, before: tuple[SliceStats, ...] | None, after: tuple[SliceStats, ...] | None) -> list[str]:
    """The worst slice of a concatenation before -> after (issue 25: the whole tensor hides it)."""
    worst = _worst_part(before, after)
    if worst is None:
        return []
    b, a = worst
    return [f"slice {b.label} of {where}: SQNR {db(b.sqnr_db, 2, none='–')} → {db(a.sqnr_db, 2, none='–')} dB"]
