"""The plan being drafted in the Requantize tab, Qt-free: route, base options and the chosen rows.

A row names an op of model B (what a surgical edit names; also one without a counterpart in A,
such as the input QUANTIZE) and A's match when there is one (what the quantizer route's plan
names, and what re-finds B's op when another version renumbers B), with its choice key
(`choices.EDIT_CHOICES` on the surgical route, `TREATMENT_CHOICES` on the quantizer route) and
calibration algorithm. Edits go through the methods, which return the user-facing messages
(an op out of range, an edit that does not apply, an op without a counterpart) and fire
`changed`; the plan editor renders its table from `rows` and turns widget edits into calls here.
`to_plan()` gives the plan of the route, `from_plan()` loads one (an equalize edit: a row for
its producer, the consumer being found when it runs).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from inspector.core.events import Event
from inspector.core.requantize.choices import (
    CHOICE_BY_KEY,
    EDIT_BY_KEY,
    EDIT_CHOICES,
    TREATMENT_CHOICES,
    edit_choice_of,
    edit_for,
    op_rows,
    override_for,
)
from inspector.core.requantize.plan import Plan, compile_selector
from inspector.core.requantize.suggest_surgical import applicable
from inspector.core.requantize.surgical_plan import KINDS, SurgicalPlan
from inspector.core.tflite.equalize_pair import refusal as equalize_refusal
from inspector.core.tflite.model import Model

SURGICAL, QUANTIZER = "surgical", "quantizer"
OpMap = Callable[[int], "int | None"]


def route_choices(route: str) -> list[tuple[str, str, str]]:
    """(key, label, tooltip) of the per-layer choices of a route."""
    if route == SURGICAL:
        return [(c.key, c.label, c.tip) for c in EDIT_CHOICES]
    return [(c.key, c.label, "") for c in TREATMENT_CHOICES]


def closest_choice(route: str, key: str | None) -> str:
    """The route's choice for `key`: the same key where the route has it, else its first one."""
    keys = [k for k, _label, _tip in route_choices(route)]
    return key if key in keys else keys[0]


def parse_ops(text: str) -> list[int]:
    """'11, 12 op:4 7-9' -> [11, 12, 4, 7, 8, 9]; ValueError naming the bad part."""
    out: list[int] = []
    for part in re.split(r"[\s,;]+", text.strip()):
        if not part:
            continue
        p = part[3:] if part.lower().startswith("op:") else part
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", p)
        if m is None:
            raise ValueError(f"'{part}' is not an op index (e.g. 11, op:12 or 7-9)")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out += list(range(lo, hi + 1))
    return out


@dataclass(frozen=True)
class DraftRow:
    """One chosen layer: A's op (None: B's op has none), B's op (None: A's op has none in the B
    open now), the choice key of the route and the calibration algorithm (None: as the base)."""

    a_op: int | None
    b_op: int | None
    choice: str
    algorithm: str | None = None


@dataclass(frozen=True)
class Outcome:
    """What an edit of the draft did: the ops (as given) added or re-chosen, the rows they are
    in, and what to tell the user."""

    ops: tuple[int, ...] = ()
    rows: tuple[int, ...] = ()
    messages: tuple[str, ...] = ()


class PlanDraft:
    """The route, the quantizer route's base options and the rows; `changed` fires after each edit."""

    def __init__(self) -> None:
        self.route = SURGICAL
        self.base = "int8"
        self.per_channel = True
        self.algorithm = "min_max"
        self._rows: list[DraftRow] = []
        self.float_model: Model | None = None
        self.quant_model: Model | None = None  # model B (which edits apply to which op)
        self.quant_ops = 0  # ops in model B's main subgraph when both are open and paired (0: no B)
        self.b_to_a: OpMap = lambda i: i
        self.a_to_b: OpMap = lambda i: i
        self.changed = Event()  # (): rows, route, options or models changed
        self._held = 0
        self._dirty = False

    # ------------------------------------------------------------------ reading
    @property
    def rows(self) -> tuple[DraftRow, ...]:
        return tuple(self._rows)

    def a_ops(self) -> list[int]:
        """A's ops of the rows that have one."""
        return [r.a_op for r in self._rows if r.a_op is not None]

    def b_ops(self) -> list[int]:
        """B's ops of the rows that have one (the surgical plan's ops, in row order)."""
        return [r.b_op for r in self._rows if r.b_op is not None]

    def op_type(self, row: int) -> str:
        """The op type of a row (A's op where it has one)."""
        r = self._rows[row]
        if r.a_op is not None and self.float_model is not None and r.a_op < len(self.float_model.main.ops):
            return self.float_model.main.ops[r.a_op].type
        qm = self.quant_model
        if r.b_op is not None and qm is not None and r.b_op < len(qm.main.ops):
            return qm.main.ops[r.b_op].type
        return "?"

    def applicable_to_b(self, b: int | None) -> set[str] | None:
        """Edit kinds that apply to B's op `b` (None: not known, no B open)."""
        qm = self.quant_model
        if qm is None or b is None or not 0 <= b < len(qm.main.ops):
            return None
        return set(applicable(qm, b, KINDS))

    def applicable_kinds(self, row: int) -> set[str] | None:
        """Edit kinds that apply to the row's op on the surgical route (None: any, not known)."""
        if self.route != SURGICAL or not self.quant_ops:
            return None
        return self.applicable_to_b(self._rows[row].b_op)

    def takes_algorithm(self, row: int) -> bool:
        c = CHOICE_BY_KEY.get(self._rows[row].choice)
        return self.route == QUANTIZER and c is not None and c.takes_algorithm

    # ------------------------------------------------------------------ models
    def set_models(self, float_model: Model | None, quant_model: Model | None) -> None:
        """Another model A (or its view through another signature) drops the rows: they named its ops."""
        with self._batch():
            if float_model is not self.float_model:
                self.float_model = float_model
                self._rows.clear()
            self.quant_model = quant_model
            self._touch()

    def set_maps(self, quant_ops: int, b_to_a: OpMap, a_to_b: OpMap) -> None:
        """B's ops of the rows with an op of A are re-found in the B open now (another version
        may number B's ops differently); `quant_ops` 0: no B open (rows then name A's ops)."""
        self.quant_ops, self.b_to_a, self.a_to_b = quant_ops, b_to_a, a_to_b
        self._rows = [replace(r, b_op=self._b_of(r.a_op)) if r.a_op is not None else r for r in self._rows]
        self._touch()

    def _b_of(self, a: int) -> int | None:
        return self.a_to_b(a) if self.quant_ops else a

    def _a_of(self, b: int) -> int | None:
        return self.b_to_a(b) if self.quant_ops else b

    # ------------------------------------------------------------------ edits
    def set_route(self, route: str) -> None:
        """Rows keep their layers; each choice becomes the closest of the new route."""
        if route not in (SURGICAL, QUANTIZER):
            raise ValueError(f"route {route!r}: surgical or quantizer")
        if route == self.route:
            return
        self.route = route
        self._rows = [replace(r, choice=closest_choice(route, r.choice)) for r in self._rows]
        self._touch()

    def set_options(self, base: str | None = None, per_channel: bool | None = None, algorithm: str | None = None) -> None:
        """The quantizer route's base scheme, weight granularity and calibration algorithm."""
        new = (base or self.base, self.per_channel if per_channel is None else per_channel, algorithm or self.algorithm)
        if new != (self.base, self.per_channel, self.algorithm):
            self.base, self.per_channel, self.algorithm = new
            self._touch()

    def add(self, ops: Iterable[int], side: str, choice: str, algorithm: str | None = None) -> Outcome:
        """Add (or re-choose) ops of model A (`side` "A") or of model B ("B": also those without
        a counterpart in A, on the surgical route). Ops out of range are left out, and so are B's
        ops without a counterpart on the quantizer route (its plan names A's ops)."""
        if side not in ("A", "B"):
            raise ValueError(f"side {side!r}: A or B")
        key = closest_choice(self.route, choice)
        ops = list(ops)
        msgs: list[str] = []
        n = self._op_count(side)
        bad = [i for i in ops if not 0 <= i < n]
        if bad:
            msgs.append(f"model {side} has ops 0..{n - 1}; there is no op {bad[0]}")
        ops = [i for i in ops if 0 <= i < n]
        if side == "B" and self.route == QUANTIZER and self.quant_ops:
            none = [b for b in ops if self.b_to_a(b) is None]
            if none:
                msgs.append(f"op {none[0]} of model B has no counterpart in model A (e.g. a QUANTIZE / DEQUANTIZE)")
            ops = [b for b in ops if b not in none]
        rows: list[int] = []
        with self._batch():
            for op in ops:
                a, b = (op, self._b_of(op)) if side == "A" else (self._a_of(op), op)
                row = self._row_of(a=op) if side == "A" else self._row_of(b=op)
                if row is None and side == "B" and a is not None:
                    row = self._row_of(a=a)  # A's op already listed (its B op re-found later)
                if row is None:
                    self._rows.append(DraftRow(a, b, key, algorithm))
                    row = len(self._rows) - 1
                else:
                    self._rows[row] = replace(self._rows[row], choice=key, algorithm=algorithm)
                rows.append(row)
                msgs += self._not_applicable(row)
            if rows:
                self._touch()
        return Outcome(tuple(ops), tuple(rows), tuple(msgs))

    def set_choice(self, rows: Iterable[int], choice: str, algorithm: str | None = None) -> Outcome:
        """Give the rows another choice (and algorithm: None, as the base); says where an edit does not apply."""
        key = closest_choice(self.route, choice)
        rows = [r for r in rows if 0 <= r < len(self._rows)]
        msgs: list[str] = []
        for r in rows:
            self._rows[r] = replace(self._rows[r], choice=key, algorithm=algorithm or None)
            msgs += self._not_applicable(r)
        if rows:
            self._touch()
        return Outcome(tuple(), tuple(rows), tuple(msgs))

    def remove(self, rows: Iterable[int]) -> None:
        drop = {r for r in rows if 0 <= r < len(self._rows)}
        if drop:
            self._rows = [r for i, r in enumerate(self._rows) if i not in drop]
            self._touch()

    def clear(self) -> None:
        if self._rows:
            self._rows.clear()
            self._touch()

    # ------------------------------------------------------------------ plans
    def to_plan(self, route: str | None = None) -> tuple[Plan | SurgicalPlan, list[str]]:
        """The plan of the route (or of `route`: surgical edits name B's op of each row, the
        quantizer route's overrides A's op), and what was left out of it."""
        msgs: list[str] = []
        route = route or self.route
        if route == SURGICAL:
            edits = []
            for r in self._rows:
                if r.b_op is None:
                    msgs.append(f"op {r.a_op} of model A has no counterpart in model B; it is left out of the plan")
                    continue
                edits.append(edit_for(r.b_op, closest_choice(route, r.choice)))
            return SurgicalPlan(tuple(edits)), msgs
        rows = [r for r in self._rows if r.a_op is not None]
        if len(rows) < len(self._rows):
            msgs.append("ops of model B without a counterpart in model A are left out of a regenerated model's plan")
        overrides = tuple(override_for(a, closest_choice(route, r.choice), r.algorithm) for r in rows if (a := r.a_op) is not None)
        return Plan(base=self.base, overrides=overrides, per_channel=self.per_channel, algorithm=self.algorithm), msgs

    def from_plan(self, plan: Plan | SurgicalPlan) -> list[str]:
        """Load a plan: its route, options and a row per op (an equalize edit: its producer)."""
        msgs: list[str] = []
        with self._batch():
            self._rows.clear()
            self._touch()
            if isinstance(plan, SurgicalPlan):
                self.set_route(SURGICAL)
                for e in plan.edits:  # every op of B, also those without a counterpart in A
                    if not e.ops:
                        msgs.append(f"the {e.kind} edit of '{e.pattern}' names no op of model B; it is not listed")
                    ops = list(e.ops[:1]) if e.kind in ("equalize", "relu6_equalize") else list(e.ops)
                    msgs += self.add(ops, "B", edit_choice_of(e.kind, e.calibration)).messages
                return msgs
            self.set_route(QUANTIZER)
            self.set_options(plan.base, plan.per_channel, plan.algorithm)
            for op, key, algo in op_rows(plan):
                msgs += self.add([op], "A", key, algo).messages
            others = [o.selector for o in plan.overrides if not isinstance(compile_selector(o.selector), int)]
            if others:
                msgs.append(f"overrides by pattern ({', '.join(others)}) are not listed: the editor holds ops")
        return msgs

    # ------------------------------------------------------------------ helpers
    def _op_count(self, side: str) -> int:
        if side == "A":
            return len(self.float_model.main.ops) if self.float_model is not None else 0
        return self.quant_ops or (len(self.quant_model.main.ops) if self.quant_model is not None else 0)

    def _row_of(self, a: int | None = None, b: int | None = None) -> int | None:
        for i, r in enumerate(self._rows):
            if (a is not None and r.a_op == a) or (b is not None and r.b_op == b):
                return i
        return None

    def _not_applicable(self, row: int) -> list[str]:
        """Why the row's edit does not apply to its op of B (equalize says its reason); [] when it does."""
        r, qm = self._rows[row], self.quant_model
        kinds, choice = self.applicable_kinds(row), EDIT_BY_KEY.get(self._rows[row].choice)
        if kinds is None or choice is None or choice.kind in kinds or r.b_op is None:
            return []
        op_type = qm.main.ops[r.b_op].type if qm is not None else "?"
        if choice.kind in ("equalize", "relu6_equalize") and qm is not None and (why := equalize_refusal(qm, r.b_op, choice.kind == "relu6_equalize")):
            return [why]
        return [f"{choice.label} does not apply to op {r.b_op} of model B ({op_type}); choose another edit for it"]

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """`changed` fires once, after the block, for all the edits inside it."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
            if not self._held and self._dirty:
                self._dirty = False
                self.changed.emit()

    def _touch(self) -> None:
        if self._held:
            self._dirty = True
        else:
            self.changed.emit()
