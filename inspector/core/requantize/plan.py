"""A requantization plan: a base scheme plus per-layer overrides, and its litert-quantizer recipe.

Layers are selected by op index (`op:INDEX`, main subgraph of the user's float model) or by a
regular expression searched in op output tensor names. Each selected op becomes one recipe rule
whose regex is the op's exact, escaped quantizer scope (output names joined by ';'), so a rule
never catches a neighbour whose name merely shares a prefix. Later overrides win, as in the
quantizer itself (it applies the last matching rule).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.errors import InputError
from inspector.core.tflite.op_facts import WEIGHTED_OPS

TREATMENTS = ("keep_float", "int8", "a16w8", "dynamic", "weight_only_int8", "weight_only_int4")
BASES = ("int8", "a16w8", "dynamic", "weight_only_int8", "weight_only_int4")
BASE_ALIASES = {"weight_only": "weight_only_int8", "a8w8": "int8", "16x8": "a16w8"}
ALGORITHMS = {"min_max": "min_max_uniform_quantize", "mse": "MSE", "octav": "OCTAV"}
NO_QUANTIZE = "no_quantize"
IO_REGEX = "^.*$"  # distinct key from the base '.*' so the I/O rules come last and win


@dataclass(frozen=True)
class Override(JsonRecord):
    """Treat the ops matched by `selector` differently from the base scheme."""

    selector: str  # "op:INDEX" or a regex over op output tensor names
    treatment: str
    per_channel: bool | None = json_field(default=None, omit_none=True)  # None: as the plan
    algorithm: str | None = json_field(default=None, omit_none=True)  # None: as the plan


@dataclass(frozen=True)
class Plan(JsonRecord):
    base: str = "int8"
    overrides: tuple[Override, ...] = ()
    per_channel: bool = True
    algorithm: str = "min_max"
    float_io: bool = True  # keep model inputs/outputs float (QUANTIZE/DEQUANTIZE at the edges)

    JSON_KEYS = ("base", "per_channel", "algorithm", "float_io", "overrides")

    def __post_init__(self) -> None:
        base = BASE_ALIASES.get(self.base, self.base)
        if base not in BASES:
            raise InputError(f"unknown base scheme {self.base!r} (choose from {', '.join(BASES)})")
        object.__setattr__(self, "base", base)
        _check_algorithm(self.algorithm)
        for o in self.overrides:
            if o.treatment not in TREATMENTS:
                raise InputError(
                    f"unknown treatment {o.treatment!r} for {o.selector!r} (choose from {', '.join(TREATMENTS)})"
                )
            if o.algorithm is not None:
                _check_algorithm(o.algorithm)

    def with_overrides(self, *more: Override) -> Plan:
        return replace(self, overrides=(*self.overrides, *more))


def _check_algorithm(name: str) -> None:
    if name not in ALGORITHMS:
        raise InputError(
            f"unknown calibration algorithm {name!r} (choose from {', '.join(ALGORITHMS)})"
        )


@dataclass(frozen=True)
class OpRef:
    """One op of a model as the plan sees it: where it is, its type and its quantizer scope."""

    subgraph: int
    index: int
    type: str
    output_names: tuple[str, ...]
    input_names: tuple[str, ...]
    scope: str = ""

    @property
    def label(self) -> str:
        where = (
            f"op {self.index}"
            if self.subgraph == 0
            else f"op {self.index} of subgraph {self.subgraph}"
        )
        return f"{where} ({self.type} -> {self.output_names[0] if self.output_names else '-'})"


@dataclass(frozen=True)
class Selection:
    """An op picked by an override: the resolved treatment and options."""

    op: OpRef
    treatment: str
    per_channel: bool
    algorithm: str
    selectors: tuple[str, ...] = field(default=())


def compile_selector(selector: str) -> int | re.Pattern[str]:
    """`op:INDEX` -> INDEX; anything else -> a compiled regex (InputError when invalid)."""
    s = selector.strip()
    if s.lower().startswith("op:"):
        try:
            return int(s[3:])
        except ValueError:
            raise InputError(
                f"bad layer selector {selector!r}: expected op:INDEX with an integer index"
            ) from None
    try:
        return re.compile(s)
    except re.error as e:
        raise InputError(f"bad layer pattern {selector!r}: {e}") from None


def select(
    plan: Plan, ops: list[OpRef], path: str | None = None, *, subgraph: int
) -> dict[tuple[int, int], Selection]:
    """Resolve each override to ops; later overrides replace earlier ones for the same op.

    `op:INDEX` addresses the main subgraph: `subgraph` (the chosen signature's, `model.main.index`)."""
    chosen: dict[tuple[int, int], Selection] = {}
    main_count = sum(1 for o in ops if o.subgraph == subgraph)
    for ov in plan.overrides:
        key = compile_selector(ov.selector)
        if isinstance(key, int):
            if not 0 <= key < main_count:
                raise InputError(
                    f"{ov.selector!r}: the main subgraph has ops 0..{main_count - 1}", path
                )
            hits = [o for o in ops if o.subgraph == subgraph and o.index == key]
        else:
            hits = [o for o in ops if any(key.search(n) for n in o.output_names)]
        if not hits:
            raise InputError(
                f"pattern {ov.selector!r} matches no op (searched in op output tensor names)", path
            )
        for op in hits:
            prev = chosen.get((op.subgraph, op.index))
            chosen[(op.subgraph, op.index)] = Selection(
                op=op,
                treatment=ov.treatment,
                per_channel=plan.per_channel if ov.per_channel is None else ov.per_channel,
                algorithm=ov.algorithm or plan.algorithm,
                selectors=(*(prev.selectors if prev else ()), ov.selector),
            )
    return chosen


def op_config(treatment: str, per_channel: bool) -> dict[str, Any]:
    """The quantizer's op_config for a treatment (same shape as its bundled recipe JSON files)."""
    gran = "CHANNELWISE" if per_channel else "TENSORWISE"

    def tensor(bits: int, symmetric: bool, granularity: str = "TENSORWISE") -> dict[str, Any]:
        return {
            "num_bits": bits,
            "symmetric": symmetric,
            "granularity": granularity,
            "dtype": "INT",
        }

    common = {"skip_checks": False, "min_weight_elements": 0}
    if treatment in ("int8", "a16w8"):
        act = tensor(8, False) if treatment == "int8" else tensor(16, True)
        return {
            "activation_tensor_config": act,
            "weight_tensor_config": tensor(8, True, gran),
            "compute_precision": "INTEGER",
            "explicit_dequantize": False,
            **common,
        }
    if treatment == "dynamic":
        return {
            "weight_tensor_config": tensor(8, True, gran),
            "compute_precision": "INTEGER",
            "explicit_dequantize": False,
            **common,
        }
    if treatment in ("weight_only_int8", "weight_only_int4"):
        bits = 8 if treatment.endswith("int8") else 4
        return {
            "weight_tensor_config": tensor(bits, True, gran),
            "compute_precision": "FLOAT",
            "explicit_dequantize": True,
            **common,
        }
    raise ValueError(treatment)


def rule(
    regex: str, treatment: str, per_channel: bool, algorithm: str, operation: str = "*"
) -> dict[str, Any]:
    if treatment == "keep_float":
        return {"regex": regex, "operation": operation, "algorithm_key": NO_QUANTIZE}
    return {
        "regex": regex,
        "operation": operation,
        "algorithm_key": ALGORITHMS[algorithm],
        "op_config": op_config(treatment, per_channel),
    }


def scope_regex(scope: str) -> str:
    return "^" + re.escape(scope) + "$"


def build_recipe(
    plan: Plan, selections: dict[tuple[int, int], Selection], forced_float: list[str]
) -> list[dict[str, Any]]:
    """Base rule, one rule per selected op (in plan order), forced-float scopes, then float I/O."""
    recipe = [rule(".*", plan.base, plan.per_channel, plan.algorithm)]
    for sel in selections.values():
        recipe.append(
            rule(scope_regex(sel.op.scope), sel.treatment, sel.per_channel, sel.algorithm)
        )
    for scope in forced_float:
        recipe.append(rule(scope_regex(scope), "keep_float", True, "min_max"))
    if plan.float_io:
        recipe.append({"regex": IO_REGEX, "operation": "INPUT", "algorithm_key": NO_QUANTIZE})
        recipe.append({"regex": IO_REGEX, "operation": "OUTPUT", "algorithm_key": NO_QUANTIZE})
    return recipe


def infer_base(quant_model: Any) -> str:
    """The base scheme a quantized `inspector.core.tflite.model.Model` most likely used."""
    weights, acts = set(), set()
    for sg in quant_model.subgraphs:
        for op in sg.ops:
            if op.type not in WEIGHTED_OPS:
                continue
            ins = [sg.tensors[i] for i in op.inputs if i >= 0]
            if len(ins) >= 2:
                weights.add(ins[1].dtype)
                acts.add(ins[0].dtype)
    if "int16" in acts:
        return "a16w8"
    if "int8" in acts:
        return "int8"
    if "int8" in weights:
        return "dynamic"
    if "float32" in weights:
        consts = {t.dtype for sg in quant_model.subgraphs for t in sg.tensors if t.is_constant}
        if "int4" in consts:
            return "weight_only_int4"
        if "int8" in consts:
            return "weight_only_int8"
    return "int8"
