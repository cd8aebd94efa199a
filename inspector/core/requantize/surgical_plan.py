"""A surgical plan: which edits to apply to which ops of the quantized model B, as JSON.

An edit names its ops by a pattern: a regex searched in the output tensor names of B's ops
(QUANTIZE/DEQUANTIZE left out), or `op:INDEX` with B's op index (the `op_index` of
`compare --json`); `all` selects every op the edit applies to. Resolved op indices are stored
with the plan, with the sample settings and the checksums of both files, so applying a saved
plan to the same pair reproduces the same bytes. The samples are written as sessions write
them (`"samples": SampleSettings.to_json()`, version 2); version 1's flat keys (`samples`: count,
`seed`, `inputs`, `normalization`) are still read.

`equalize` (cross-layer equalization) names a producer P by its pattern; its ops are the pair
[P, C], C being P's one consumer (found by `equalize_pair.consumer_of`): a pattern matching several
producers becomes one edit per producer. In plan files it is written and read as
`{"edit": "equalize", "ops": [P, C]}` (with `kind` and `pattern` too; `edit` is read as `kind`,
and a missing pattern is `op:P`). Neither P nor C may take another weight or structural edit, and
P's output is re-calibrated by the equalization itself.

`relu6_equalize` is `equalize` for a producer ending in ReLU6 (DFQ's recipe, `relu6.py`): its
ReLU6 becomes ReLU, then the pair is equalized; written `{"edit": "relu6_equalize", "ops": [P, C]}`.
It changes the float function (measured and refused with the reason where it matters); on a
producer ending in none or ReLU it is plain equalize.

`input_range` names an op that reads an integer (int8/uint8) model input: the input's scale and
zero point are widened to its real values' range (`recalibrate.widen_input`). It changes the
model's interface (the caller must quantize with the new parameters), and says so.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from inspector.core.codec.json_record import OMIT, JsonRecord, json_field
from inspector.core.errors import InputError
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.equalize_pair import consumer_of
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import BOUNDARY_OPS, SURGICAL_WEIGHT_OPS

KINDS = ("recalibrate", "per_channel", "weight_mse", "bias_correct", "a16w8", "keep_float", "equalize", "input_range",
         "relu6_equalize")
EQUALIZE_KINDS = ("equalize", "relu6_equalize")  # edits of a (producer, consumer) pair
# Edits that replace how an op computes; an op takes at most one of them and no weight edit with it.
STRUCTURAL = ("keep_float", "a16w8")
CALIBRATIONS = ("minmax", "mse")  # plus "percentile:P"
PLAN_VERSION = 2


@dataclass(frozen=True)
class Edit(JsonRecord):
    kind: str  # one of KINDS
    pattern: str  # regex over B's op output tensor names, `op:INDEX`, or `all`
    calibration: str | None = json_field(default=None, omit_none=True)  # recalibrate only: minmax | mse | percentile:P
    ops: tuple[int, ...] = ()  # resolved op indices of B (filled by `resolve`)

    # an equalize edit also names its kind "edit" (what older plans read)
    JSON_EXTRA = {"edit": lambda e: e.kind if e.kind in EQUALIZE_KINDS else OMIT}
    JSON_KEYS = ("kind", "pattern", "ops", "calibration", "edit")

    @classmethod
    def from_json(cls, e: Mapping[str, Any]) -> Edit:
        """Hand-written: older plans name the kind "edit" and may give only the ops (no pattern)."""
        kind = str(e["kind"] if "kind" in e else e["edit"])
        ops = tuple(int(i) for i in e.get("ops", []))
        pattern = e.get("pattern")
        if pattern is None:
            if not ops:
                raise KeyError("pattern")
            pattern = f"op:{ops[0]}"
        return cls(kind, str(pattern), e.get("calibration"), ops)


@dataclass(frozen=True)
class SurgicalPlan(JsonRecord):
    edits: tuple[Edit, ...]
    samples: SampleSettings = field(default_factory=SampleSettings)  # for data-dependent edits and validation
    float_sha256: str | None = None
    quant_sha256: str | None = None
    signature: str | None = None  # whose subgraph the op indices address (None: subgraph 0)

    JSON_EXTRA = {"version": lambda p: PLAN_VERSION, "route": lambda p: "surgical"}
    JSON_KEYS = ("version", "route", "edits", "samples", "float_sha256", "quant_sha256", "signature")

    def ops_for(self, kind: str) -> tuple[int, ...]:
        out: list[int] = []
        for e in self.edits:
            if e.kind == kind:
                out += [i for i in e.ops if i not in out]
        return tuple(sorted(out))

    def equalize_pairs(self) -> tuple[tuple[int, int], ...]:
        """(producer, consumer) of each resolved equalize or relu6_equalize edit, in plan order."""
        return tuple((e.ops[0], e.ops[1]) for e in self.edits if e.kind in EQUALIZE_KINDS and len(e.ops) == 2)

    def relu6_producers(self) -> tuple[int, ...]:
        """The producers of the resolved relu6_equalize edits (their ReLU6 may become ReLU)."""
        return tuple(e.ops[0] for e in self.edits if e.kind == "relu6_equalize" and len(e.ops) == 2)

    def edited_ops(self) -> tuple[int, ...]:
        return tuple(sorted({i for e in self.edits for i in e.ops}))

    def needs_samples(self) -> bool:
        return any(e.kind in ("bias_correct", "recalibrate", "a16w8", *EQUALIZE_KINDS, "input_range") for e in self.edits)

    @classmethod
    def from_json(cls, d: Mapping[str, Any], path: str | None = None) -> SurgicalPlan:
        """Hand-written: a file the user gives: checked (route, kinds), older versions' samples
        migrated, any damage an InputError naming `path`."""
        try:
            if d.get("route", "surgical") != "surgical":
                raise InputError("not a surgical plan (route is not 'surgical')", path)
            edits = tuple(Edit.from_json(e) for e in d["edits"])
            for e in edits:
                check_kind(e.kind, path)
            return cls(
                edits,
                _samples(d),
                d.get("float_sha256"),
                d.get("quant_sha256"),
                None if d.get("signature") is None else str(d["signature"]),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise InputError(f"not a valid surgical plan ({e})", path) from None


def _samples(d: Mapping[str, Any]) -> SampleSettings:
    if isinstance(d.get("samples"), dict):  # version 2, as sessions write it
        return SampleSettings.from_json(d["samples"])
    return SampleSettings.from_json({k: d.get(k) for k in ("samples", "seed", "inputs", "normalization")})


def check_kind(kind: str, path: str | None = None) -> None:
    if kind not in KINDS:
        raise InputError(f"unknown edit '{kind}' (known: {', '.join(KINDS)})", path)


def check_calibration(calibration: str) -> None:
    if calibration in CALIBRATIONS:
        return
    m = re.fullmatch(r"percentile:([0-9.]+)", calibration)
    if m is None or not 50.0 < float(m.group(1)) <= 100.0:
        raise InputError(f"--calibration must be minmax, mse or percentile:P with 50 < P <= 100, not '{calibration}'")


def load_plan(path: str) -> SurgicalPlan:
    try:
        d = json.loads(Path(path).read_text())
    except (OSError, ValueError) as e:
        raise InputError(f"cannot read the plan ({e.__class__.__name__}: {e})", path) from None
    if not isinstance(d, dict):
        raise InputError("not a valid surgical plan (expected a JSON object)", path)
    return SurgicalPlan.from_json(d, path)


def sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _selectable(qm: Model) -> list[int]:
    return [op.index for op in qm.main.ops if op.type not in BOUNDARY_OPS]


def match_ops(qm: Model, pattern: str, kind: str) -> tuple[int, ...]:
    """Op indices of B that `pattern` selects (InputError when none)."""
    sg = qm.main
    ops = _selectable(qm)
    if pattern == "all":
        if kind != "bias_correct":
            raise InputError(f"'all' is only accepted by --bias-correct, not by {kind}")
        return tuple(i for i in ops if sg.ops[i].type in SURGICAL_WEIGHT_OPS)
    m = re.fullmatch(r"op:(\d+)", pattern)
    if m:
        i = int(m.group(1))
        if i >= len(sg.ops):
            raise InputError(f"{pattern}: the quantized model has only {len(sg.ops)} ops", qm.path)
        if sg.ops[i].type in BOUNDARY_OPS:
            raise InputError(f"{pattern} is a {sg.ops[i].type} op; select the op it converts for", qm.path)
        return (i,)
    try:
        rx = re.compile(pattern)
    except re.error as e:
        raise InputError(f"'{pattern}' is not a valid regular expression ({e})") from None
    hits = tuple(i for i in ops if any(o >= 0 and rx.search(sg.tensors[o].name) for o in sg.ops[i].outputs))
    if not hits:
        raise InputError(f"'{pattern}' matches no op output tensor name of the quantized model", qm.path)
    return hits


def resolve(plan: SurgicalPlan, qm: Model) -> SurgicalPlan:
    """Fill each edit's op indices (kept when already given, as in a saved plan) and check conflicts."""
    edits = []
    for e in plan.edits:
        check_kind(e.kind)
        if e.kind in EQUALIZE_KINDS:
            edits += _resolve_equalize(e, qm)
            continue
        ops = e.ops or match_ops(qm, e.pattern, e.kind)
        bad = [i for i in ops if i >= len(qm.main.ops)]
        if bad:
            raise InputError(f"the plan names op {bad[0]}, but the quantized model has {len(qm.main.ops)} ops", qm.path)
        if e.kind == "recalibrate":
            check_calibration(e.calibration or "minmax")
        edits.append(replace(e, ops=tuple(sorted(ops)), calibration=(e.calibration or "minmax") if e.kind == "recalibrate" else None))
    resolved = replace(plan, edits=tuple(edits))
    structural: dict[int, str] = {}
    for k in STRUCTURAL:
        for i in resolved.ops_for(k):
            if i in structural:
                raise InputError(f"op {i} is selected for both {structural[i]} and {k}; choose one")
            structural[i] = k
    for e in resolved.edits:
        if e.kind in ("per_channel", "weight_mse", "bias_correct"):
            clash = [i for i in e.ops if i in structural]
            if clash and e.pattern != "all":
                raise InputError(f"op {clash[0]} is selected for {structural[clash[0]]} and {e.kind}; choose one")
    _check_equalize_conflicts(resolved, structural)
    # `--bias-correct all` leaves out ops that are kept float or moved to 16 bits.
    edits = [replace(e, ops=tuple(i for i in e.ops if i not in structural)) if e.pattern == "all" else e for e in resolved.edits]
    return replace(resolved, edits=tuple(edits))


def _resolve_equalize(e: Edit, qm: Model) -> list[Edit]:
    """One edit (ops [P, C]) per producer the edit names; InputError with the reason when a
    producer cannot be equalized or a saved consumer is not P's one consumer any more."""
    relu6 = e.kind == "relu6_equalize"
    if e.ops:
        if len(e.ops) > 2:
            raise InputError(f"an {e.kind} edit names a producer and its consumer, not {len(e.ops)} ops ({list(e.ops)})", qm.path)
        p = e.ops[0]
        c = consumer_of(qm, p, relu6)
        if len(e.ops) == 2 and e.ops[1] != c:
            raise InputError(f"{e.kind}: op {e.ops[1]} is not the consumer of op {p} (op {c} is)", qm.path)
        return [replace(e, ops=(p, c), calibration=None)]
    return [replace(e, ops=(p, consumer_of(qm, p, relu6)), calibration=None) for p in match_ops(qm, e.pattern, e.kind)]


def _check_equalize_conflicts(plan: SurgicalPlan, structural: dict[int, str]) -> None:
    pairs = plan.equalize_pairs()
    producers = [p for p, _ in pairs]
    dup = sorted({p for p in producers if producers.count(p) > 1})
    if dup:
        raise InputError(f"op {dup[0]} is selected for equalize twice")
    touched = {i for pair in pairs for i in pair}
    for i in sorted(touched):
        if i in structural:
            raise InputError(f"op {i} is selected for equalize and {structural[i]}; choose one")
    for e in plan.edits:
        if e.kind in ("per_channel", "weight_mse"):
            clash = [i for i in e.ops if i in touched]
            if clash:
                raise InputError(f"op {clash[0]} is selected for equalize and {e.kind} (equalize re-quantizes its weights per channel); choose one")
        if e.kind == "recalibrate":
            clash = [i for i in e.ops if i in producers]
            if clash:
                raise InputError(f"op {clash[0]} is selected for equalize and recalibrate (equalize re-calibrates its output); choose one")
