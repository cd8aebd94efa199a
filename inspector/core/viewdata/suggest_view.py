"""What Suggest found, ready to show: one view of either route's result, and its one text.

Both routes name layers by B's op index, B's op type and B's output tensor (the quantizer route
measures B's layers but regenerates from the float model, whose op indices differ; plans keep the
float indices). Counts are stated once, against what they count: the candidates tried one by one
are the worst few of the ranked layers; group edits go over the ranked layers they apply to.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from inspector.core.requantize.choices import edit_label
from inspector.core.requantize.suggest import SuggestResult
from inspector.core.requantize.suggest_surgical import SurgicalSuggestResult
from inspector.core.requantize.tradeoff import TradeoffPoint
from inspector.core.text.numbers import db, signed
from inspector.core.tflite.layer_names import layer_name
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import op_label

Namer = Callable[[int, str, str], str]  # (B op index, op type, tensor name) -> its name in the view


@dataclass(frozen=True)
class SuggestStep:
    edit: str  # 'keep float', 'per-channel', ...
    ops: str  # 'op 19 ADD (block_2_add)' or 'the 7 worst layers by isolated SQNR'
    gain_db: float
    sqnr_db: float  # where the suggestion measures, after this step
    size_delta_bytes: int | None = None  # against the given model (surgical route)
    latency_delta_ms: float | None = None


@dataclass(frozen=True)
class SuggestView:
    route: str  # "surgical" | "quantizer"
    met: bool
    measured_at: str  # "the model output" or the objective
    before_db: float
    after_db: float
    target_db: float | None
    steps: tuple[SuggestStep, ...]
    candidates: tuple[str, ...]  # B's ops tried one by one, worst isolated SQNR first
    ranked: int
    evaluations: int
    points: tuple[TradeoffPoint, ...]  # the given model first, then every evaluated plan
    best: TradeoffPoint | None
    output_before_db: float | None = None  # model output when measured elsewhere (surgical objective)
    output_after_db: float | None = None
    notes: tuple[str, ...] = ()
    start_db: float | None = None  # quantizer route: the float model requantized without overrides


def _iso(v: float | None) -> str:
    return "exact" if v is None or math.isinf(v) else f"{v:.1f} dB"


def _own(candidate: dict[str, Any]) -> str:
    """The figure a candidate was ranked by: its isolated SQNR, or its accumulated one where the
    isolated one is not measured or exact beside a cause of its own (the op reading the model input)."""
    if "accumulated_sqnr_db" in candidate:
        return f"{_iso(candidate['accumulated_sqnr_db'])} accumulated (isolated {candidate.get('isolated', 'exact')})"
    return _iso(candidate["isolated_sqnr_db"])


def _namer(model: Model | None) -> Namer:
    """Names B's op as the plan rows and versions do (`layer_name`: index and distinguishing
    tensor name, then the type) when model B is given; else index, type and output tensor."""

    def name(op: int, op_type: str, tensor: str) -> str:
        if model is not None and 0 <= op < len(model.main.ops) and model.main.ops[op].type == op_type:
            return f"{layer_name(model, op)} ({op_type})"
        return op_label(op, op_type, tensor)

    return name


def suggest_view(s: SuggestResult | SurgicalSuggestResult, measured_at: str | None = None, model: Model | None = None) -> SuggestView:
    """`model`: the open model B, to name its layers as everywhere else in the app."""
    if isinstance(s, SurgicalSuggestResult):
        return _surgical(s, measured_at, _namer(model))
    return _quantizer(s, _namer(model))


def _surgical(s: SurgicalSuggestResult, at: str | None, name: Namer = op_label) -> SuggestView:
    size0, lat0 = s.baseline_size_bytes, s.baseline_latency_ms
    steps = tuple(
        SuggestStep(edit_label(st.edit), name(st.ops[0], st.type, st.tensor) if len(st.ops) == 1 else st.tensor,
                    st.gain_db, st.objective_sqnr_db, st.size_bytes - size0, st.latency_ms - lat0)
        for st in s.steps
    )  # fmt: skip
    given = TradeoffPoint("given", (), size0, s.baseline_sqnr_db)
    best = None
    if s.best is not None and s.steps:
        best = next((p for p in reversed(s.points) if p.size_bytes == s.steps[-1].size_bytes
                     and p.output_sqnr_db == s.best_sqnr_db), None)  # fmt: skip
        best = best or TradeoffPoint("suggested", (), s.steps[-1].size_bytes, s.best_sqnr_db)
    cands = tuple(f"{name(c['op'], c['type'], c['tensor'])}: {_own(c)}"
                  + (f", {c['cause']}" if c.get("cause") else "") for c in s.candidates)
    return SuggestView(
        "surgical", s.met, at or "the model output", s.baseline_sqnr_db, s.best_sqnr_db, s.target_sqnr_db, steps,
        cands, s.ranked, s.evaluations, (given, *s.points), best,
        output_before_db=s.output_sqnr_db_before if at else None, output_after_db=s.output_sqnr_db_after if at else None,
        notes=tuple(s.notes),
    )  # fmt: skip


def _given(p: TradeoffPoint) -> bool:
    return p.label == "given" or p.label.endswith("(given)")


def _b_name(row: dict[str, Any], name: Namer = op_label) -> str:
    """B's op of a quantizer-route row, and the float model's index where it differs (plans and
    the reproduce line use that one); results without B's op: the float model's op, said so."""
    if "quant_op" not in row:
        return f"float model's {op_label(row['op'], row['type'], row.get('tensor', ''))}"
    b = name(row["quant_op"], row["quant_type"], row["quant_tensor"])
    return b if row["quant_op"] == row["op"] else f"{b} = float model's op {row['op']}"


def _short(p: TradeoffPoint, quant: dict[int, int]) -> str:
    """'given', 'none' (requantized, no overrides) or '+op 19, 21' (B's ops)."""
    if _given(p):
        return "given"
    return "+op " + ", ".join(str(quant.get(i, i)) for i in p.layers) if p.layers else "none"


def _quantizer(s: SuggestResult, name: Namer = op_label) -> SuggestView:
    given = next((p for p in s.points if _given(p)), None)
    before = given.output_sqnr_db if given is not None else math.nan
    start = next((p.output_sqnr_db for p in s.points if not p.layers and not _given(p)), None)
    after = s.layers[-1].get("output_sqnr_db", math.nan) if s.layers else (s.points[1].output_sqnr_db if len(s.points) > 1 else before)
    label = edit_label(s.treatment)
    steps = tuple(SuggestStep(label, _b_name(x, name), x["gain_db"], x.get("output_sqnr_db", math.nan)) for x in s.layers)
    quant = {c["op"]: c.get("quant_op", c["op"]) for c in s.candidates}
    points = tuple(TradeoffPoint(_short(p, quant), p.layers, p.size_bytes, p.output_sqnr_db) for p in s.points)
    chosen = tuple(x["op"] for x in s.layers)
    hit = [i for i, p in enumerate(s.points) if p.layers == chosen and not _given(p)]
    best = points[hit[-1]] if s.best is not None and hit else None
    cands = tuple(f"{_b_name(c, name)}: {_iso(c['sqnr_db'])}" for c in s.candidates)
    return SuggestView("quantizer", s.met, "the model output", before, after, s.target_sqnr_db, steps, cands, s.ranked,
                       s.evaluations, points, best, notes=tuple(s.notes), start_db=start)  # fmt: skip


def suggest_lines(v: SuggestView) -> list[str]:
    """The text of a suggestion, line by line (GUI and command line show the same)."""
    verdict = "meets the target" if v.met else "does not meet the target"
    if v.target_db is None:
        verdict = "within the edit budget"
    n = len(v.steps)
    head = f"Suggested ({verdict}): SQNR at {v.measured_at} {db(v.before_db, 2, unit=True)} → {db(v.after_db, 2, unit=True)} with {n} step(s)"
    if v.target_db is not None:
        head += f" (target {v.target_db:.1f} dB)"
    lines = [head + "."]
    if v.start_db is not None:
        lines.append(f"Requantized from the float model without overrides: {db(v.start_db, 2, unit=True)}; the steps add to that.")
    if v.output_before_db is not None and v.output_after_db is not None:
        lines.append(f"Model output {db(v.output_before_db, 2, unit=True)} → {db(v.output_after_db, 2, unit=True)}.")
    for k, st in enumerate(v.steps):
        cost = ""
        if st.size_delta_bytes is not None and st.latency_delta_ms is not None:
            cost = f"; size {signed(st.size_delta_bytes / 1024, 1)} KiB, latency {signed(st.latency_delta_ms, 2)} ms"
        lines.append(f"{k + 1}. {st.edit} on {st.ops}: {st.gain_db:+.2f} dB → {db(st.sqnr_db, 2, unit=True)}{cost}")
    if not v.steps:
        lines.append("No edit found.")
    if v.candidates:
        lines.append(f"Candidates, one at a time: the {len(v.candidates)} worst of {v.ranked} ranked layers by own (isolated) SQNR: "
                     + "; ".join(v.candidates) + ".")  # fmt: skip
    lines += [f"• {note}" for note in v.notes]
    what = "edit+validate+measure" if v.route == "surgical" else "requantize+compare"
    lines.append(f"• {v.evaluations} {what} evaluations")
    return lines


def suggest_text(s: SuggestResult | SurgicalSuggestResult, measured_at: str | None = None, model: Model | None = None) -> str:
    return "\n".join(suggest_lines(suggest_view(s, measured_at, model)))
