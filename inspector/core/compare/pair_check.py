"""Is this pair really a float model and its quantized twin? Cheap checks on the files alone.

- Swapped: model A holds quantized integer tensors and model B none (B is the float one). The
  caller swaps them and says so.
- Not twins: the paired constant weights disagree far beyond quantization. For every paired op
  whose B weight is integer-quantized and has A's shape, |dequant(B) - A| is measured in units
  of B's quantization step (per channel, or per block for blockwise weights). Rounding gives at
  most half a step; a weight more than `DISAGREE_STEPS` steps away "disagrees", and so does a
  weight tensor whose median is. A twin
  has (almost) none; a model trained from another seed has nearly all its weights tens to
  hundreds of steps away. Most weight tensors disagreeing means another model; a few (one layer
  with a broken scale or edited weights) is a finding about those ops, listed, not a verdict.
  Pairing coverage (the share of B's compute ops paired with an A op) is the second signal.
- Float16 twins (weights stored as float16 behind DEQUANTIZE): the same test with B's rounding
  unit the float16 ulp at A's value (rounding gives at most half an ulp; another training is
  hundreds of ulps away), with relative errors beside.
- Not a float model and a quantized one (`pair_kinds`): the same model twice, two quantized
  models, two float models. Refused, with that reason alone.
- Nothing compared: when both models have weights but no pair could be measured (both float32,
  shapes differ, an encoding not read here), `weights_checked` is False and `note` says why: the
  pair is not refused, but it is not verified either.

Weights only, no interpreter run: fast enough to run before every comparison.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.equalized import reference_source
from inspector.core.compare.median import median as median_value
from inspector.core.compare.pair_io import io_mismatches
from inspector.core.compare.pair_kinds import kind_reasons
from inspector.core.compare.pairing import Pairing, compute_ops, pair_models
from inspector.core.compare.weights import (
    WeightSource,
    fake_quantized,
    weight_fake_quant,
    weight_tensor_of,
)
from inspector.core.progress import paced
from inspector.core.quantmath.float16 import ulp_errors
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Op, Subgraph, load_model

DISAGREE_STEPS = 2.0  # a weight further than this from its twin (in B's steps) disagrees
UNRELATED_SHARE = 0.5  # more than this share of weight tensors disagreeing: not twins
MIN_COVERAGE = 0.5  # fewer of B's compute ops paired than this: not twins
MAX_ELEMENTS_PER_TENSOR = 1 << 20  # larger weights are read with a stride (deterministic)


def _ops_json(ops: tuple[tuple[int, float], ...]) -> list[dict[str, Any]]:
    return [{"op_index": i, "median_step_error": m} for i, m in ops]


def _ops_from_json(v: list[dict[str, Any]]) -> tuple[tuple[int, float], ...]:
    return tuple((x["op_index"], x["median_step_error"]) for x in v)


@dataclass(frozen=True)
class PairCheck(JsonRecord):
    """Figures of the pair check; `related` False means "these are not twins". JSON: every key
    optional when read (older results), a missing one the figure of a sound pair."""

    swapped: bool = json_field(absent=False)  # A looked quantized and B float: the caller should swap them
    a_quantized_tensors: int = json_field(absent=0)
    b_quantized_tensors: int = json_field(absent=0)
    weights_compared: int = json_field(absent=0)  # paired weight tensors measured
    elements_compared: int = json_field(absent=0)
    disagree_share: float | None = json_field(absent=None)  # share of weight elements more than DISAGREE_STEPS away
    median_step_error: float | None = json_field(absent=None)  # |dequant(B) - A| in B's steps
    p99_step_error: float | None = json_field(absent=None)
    max_step_error: float | None = json_field(absent=None)
    op_coverage: float = json_field(absent=1.0)  # share of B's compute ops paired with an op of A
    float_op_coverage: float = json_field(absent=1.0)  # share of A's compute ops paired with an op of B
    related: bool = json_field(absent=True)
    reasons: tuple[str, ...] = ()
    tensors_disagreeing: int = 0  # weight tensors whose median error exceeds DISAGREE_STEPS
    # (B op index, median step error); JSON: [{"op_index", "median_step_error"}]
    disagreeing_ops: tuple[tuple[int, float], ...] = json_field(default=(), encode=_ops_json, decode=_ops_from_json)
    # Float16 weights among those compared: their errors in float16 ulps (also in the step figures
    # above, whose unit `error_unit` names) and relative to A's values.
    float16_weights_compared: int = 0
    float16_elements_compared: int = 0
    float16_median_ulp_error: float | None = None
    float16_max_ulp_error: float | None = None
    float16_median_relative_error: float | None = None
    float16_max_relative_error: float | None = None
    error_unit: str = "quantization steps"
    weights_paired: int = 0  # paired ops with a constant weight on both sides
    note: str = ""  # why no weight could be compared (empty when some were, or a model has none)

    @property
    def weights_checked(self) -> bool:
        """False when both models have weights but none could be compared: the pair is unverified."""
        return not self.note
    io_mismatches: tuple[str, ...] = ()  # inputs / outputs that cannot correspond (`pair_io`)

    @property
    def message(self) -> str:
        """One line for a user: what is wrong, with the figures (empty for a sound pair)."""
        return "; ".join(self.reasons)

    JSON_EXTRA = {"disagree_steps": lambda c: DISAGREE_STEPS, "weights_checked": lambda c: c.weights_checked}
    JSON_KEYS = ("swapped", "related", "reasons", "weights_compared", "elements_compared", "disagree_share", "disagree_steps",
                 "median_step_error", "p99_step_error", "max_step_error", "op_coverage", "float_op_coverage",
                 "a_quantized_tensors", "b_quantized_tensors", "tensors_disagreeing", "disagreeing_ops", "error_unit",
                 "weights_paired", "weights_checked", "note", "float16_weights_compared", "float16_elements_compared",
                 "float16_median_ulp_error", "float16_max_ulp_error", "float16_median_relative_error",
                 "float16_max_relative_error", "io_mismatches")  # fmt: skip


def quantized_tensor_count(model: Model) -> int:
    """Integer tensors with quantization parameters, over every subgraph."""
    return sum(
        1 for sg in model.subgraphs for t in sg.tensors if t.dtype in INT_LIMITS and t.quantization is not None
    )


def check_pair_files(float_path: str | Path, quant_path: str | Path) -> PairCheck:
    """`check_pair` on two files (the one call the CLI and the GUI make before comparing)."""
    return check_pair(load_model(str(float_path)), load_model(str(quant_path)))


def check_pair(a: Model, b: Model, pairing: Pairing | None = None) -> PairCheck:
    """Swap and twin checks of model A (meant float) against model B (meant quantized).

    When A and B look swapped the weight figures are computed the right way round (B's float
    weights against A's quantized ones), so the verdict does not depend on the order."""
    qa, qb = quantized_tensor_count(a), quantized_tensor_count(b)
    swapped = qa > 0 and qb == 0
    fm, qm = (b, a) if swapped else (a, b)
    if pairing is None or swapped:
        pairing = pair_models(fm, qm)
    fsg, qsg = fm.main, qm.main
    n_q, n_f = len(compute_ops(qsg)), len(compute_ops(fsg))
    cov_q = len(pairing.ops) / n_q if n_q else 1.0
    cov_f = len(pairing.ops) / n_f if n_f else 1.0
    measured = _weight_errors(fm, fsg, qm, qsg, pairing)
    steps = [(m.op, m.err) for m in measured]
    f16 = [m for m in measured if m.rel is not None]
    unit = _unit(len(f16), len(steps))
    reasons: list[str] = []
    if swapped:
        reasons.append(f"{Path(a.path).name} is the quantized model and {Path(b.path).name} the float one: swapped")
    share = median = p99 = top = None
    n_tensors = len(steps)
    medians = [(op, _median_above(e, DISAGREE_STEPS)) for op, e in steps]
    off = tuple((op, m) for op, m in medians if m is not None)
    if steps:
        allsteps = np.concatenate([e for _, e in steps])
        share = float(np.mean(allsteps > DISAGREE_STEPS))
        median, p99, top = (float(v) for v in np.percentile(allsteps, [50, 99, 100]))
    related = True
    if n_tensors and len(off) / n_tensors > UNRELATED_SHARE:
        related = False
        reasons.append(
            f"{share:.0%} of the paired weights disagree by more than {DISAGREE_STEPS:g} {unit} "
            f"(median {median:.1f}, p99 {p99:.1f} {_short(unit)}; {len(off)} of {n_tensors} weight tensors): "
            "not the same trained model"
        )
    elif off:
        ops = ", ".join(f"op {op} ({m:.0f} {_short(unit)})" for op, m in off[:5])
        reasons.append(f"weights of {ops} differ from the float model far beyond rounding: a wrong scale or edited weights")
    if cov_q < MIN_COVERAGE:
        related = False
        reasons.append(f"only {cov_q:.0%} of the quantized model's ops pair with an op of the float model")
    paired = _paired_weights(fm, fsg, qm, qsg, pairing)
    note = ""
    if not steps and _has_weights(fsg) and _has_weights(qsg):
        note = _nothing_compared(paired, fsg, qsg, pairing)
    f16_err = np.concatenate([m.err for m in f16]) if f16 else None
    f16_rel = np.concatenate([m.rel for m in f16]) if f16 else None
    io = io_mismatches(fsg, qsg)
    if io:
        related = False
        reasons.append("inputs or outputs differ: " + "; ".join(io))
    kinds = kind_reasons(fm, qm)  # not a float model and a quantized one: said first, alone
    if kinds:
        related = False
        reasons = [r for r in reasons if "swapped" in r] + kinds
    return PairCheck(
        swapped=swapped,
        a_quantized_tensors=qa,
        b_quantized_tensors=qb,
        weights_compared=n_tensors,
        elements_compared=int(sum(e.size for _, e in steps)),
        disagree_share=share,
        median_step_error=median,
        p99_step_error=p99,
        max_step_error=top,
        op_coverage=cov_q,
        float_op_coverage=cov_f,
        related=related,
        reasons=tuple(reasons),
        tensors_disagreeing=len(off),
        disagreeing_ops=off,
        float16_weights_compared=len(f16),
        float16_elements_compared=0 if f16_err is None else int(f16_err.size),
        float16_median_ulp_error=None if f16_err is None else median_value(f16_err),
        float16_max_ulp_error=None if f16_err is None else float(np.max(f16_err)),
        float16_median_relative_error=None if f16_rel is None or not f16_rel.size else median_value(f16_rel),
        float16_max_relative_error=None if f16_rel is None or not f16_rel.size else float(np.max(f16_rel)),
        error_unit=unit,
        weights_paired=len(paired),
        note=note,
        io_mismatches=io,
    )


def _unit(n_float16: int, n_all: int) -> str:
    if n_float16 == 0:
        return "quantization steps"
    return "float16 ulps" if n_float16 == n_all else "rounding steps (quantization steps or float16 ulps)"


def _short(unit: str) -> str:
    return "ulps" if unit == "float16 ulps" else "steps"


@dataclass(frozen=True)
class _Measured:
    op: int  # B's op
    err: np.ndarray  # |B - A| in B's rounding unit (quantization steps, float16 ulps)
    rel: np.ndarray | None  # float16 weights: |B - A| / |A| where A != 0


_NOT_WEIGHTS = frozenset({"int32", "int64", "bool", "string"})  # axes, shapes, indices: constants, not weights


def _weight_of(sg: Subgraph, op: Op) -> int | None:
    """The op's weight tensor, or None when it has none (an axis or shape constant is not one)."""
    ti = weight_tensor_of(sg, op)
    return None if ti is None or sg.tensors[ti].dtype in _NOT_WEIGHTS else ti


def _has_weights(sg: Subgraph) -> bool:
    return any(_weight_of(sg, op) is not None for op in compute_ops(sg))


def _paired_weights(fm: Model, fsg: Subgraph, qm: Model, qsg: Subgraph, pairing: Pairing) -> list[tuple[int, str, str]]:
    """(B op, A's weight dtype, B's weight dtype) of paired ops with a constant weight on both sides."""
    out = []
    for pair in pairing.ops:
        ti_q = _weight_of(qsg, qsg.ops[pair.quant_op])
        ti_f = _weight_of(fsg, fsg.ops[pair.float_op])
        if ti_q is not None and ti_f is not None:
            out.append((pair.quant_op, fsg.tensors[ti_f].dtype, qsg.tensors[ti_q].dtype))
    return out


def _nothing_compared(paired: list[tuple[int, str, str]], fsg: Subgraph, qsg: Subgraph, pairing: Pairing) -> str:
    """Why no weight was compared, for a pair where both models have weights."""
    head = "no weight compared: "
    tail = "; the pair is not verified as a float model and its twin"
    if not paired:
        return head + f"none of B's ops with weights pairs with an op of A with weights ({len(pairing.ops)} ops paired)" + tail
    kinds = sorted({(fa, fb) for _, fa, fb in paired})
    if all(fa == fb and not fb.startswith("int") for fa, fb in kinds):
        what = f"B's weights are {kinds[0][1]} like A's (no quantization or float16 rounding to measure)"
    else:
        what = "the paired weights differ in shape or use an encoding not measured here (" + ", ".join(
            f"A {fa} / B {fb}" for fa, fb in kinds[:4]) + ")"
    return head + f"{len(paired)} paired weight tensors, but {what}" + tail


def _weight_errors(fm: Model, fsg: Subgraph, qm: Model, qsg: Subgraph, pairing: Pairing) -> list[_Measured]:
    """Per paired weight tensor: |B - A| in B's rounding unit, flattened and strided when large:
    quantization steps for integer B, float16 ulps at A's value for float16 B."""
    out: list[_Measured] = []
    for pair in paced(pairing.ops, 8):  # a weight's step errors each: numpy over its values
        ti_q = weight_tensor_of(qsg, qsg.ops[pair.quant_op])
        ti_f = weight_tensor_of(fsg, fsg.ops[pair.float_op])
        if ti_q is None or ti_f is None:
            continue
        try:
            b = WeightSource.from_tensor(qm, qsg.tensors[ti_q])
            a = WeightSource.from_tensor(fm, fsg.tensors[ti_f])
            fq = weight_fake_quant(fsg, fsg.ops[pair.float_op])
            if a is not None and fq is not None and (fq_q := fq.quantization(fsg)) is not None:
                a = fake_quantized(a, fq_q, fsg.tensors[fq.quantized].dtype)  # what A's op reads (QAT twin)
            a = reference_source(qm, ti_q, a)  # equalized: A's ÷/× s
        except Exception:  # noqa: BLE001 - an unreadable weight (exotic encoding) is just not measured
            continue
        if a is None or b is None or a.is_quantized or a.blockwise is not None or a.values.shape != b.values.shape:
            continue
        if b.is_quantized or b.blockwise is not None:
            err = _step_errors(a.values, b) if b.blockwise is None else _block_step_errors(a.values, b)
            if err is not None and err.size:
                out.append(_Measured(pair.quant_op, err, None))
        elif b.dtype == "float16" and a.dtype in ("float32", "float64"):
            m = _ulp_errors(a.values, b.values)
            if m is not None:
                out.append(_Measured(pair.quant_op, *m))
    return out


def _block_step_errors(float_values: np.ndarray, b: WeightSource) -> np.ndarray | None:
    """|dequant(B) - A| / step of B's block, for blockwise B (block of flat index j: j // block size)."""
    p = b.blockwise
    assert p is not None
    n = b.values.size
    idx = np.arange(0, n, max(1, -(-n // MAX_ELEMENTS_PER_TENSOR)))
    j = idx // p.block_size
    scales = p.scales.reshape(-1)
    if j.size and j[-1] >= scales.size:
        return None
    s = scales[j]
    z = 0.0 if p.zero_points is None else p.zero_points.reshape(-1)[j].astype(np.float64)
    qv = b.values.reshape(-1)[idx].astype(np.float64)
    av = np.asarray(float_values).reshape(-1)[idx].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs((qv - z) * s - av) / s
    kept: np.ndarray = err[np.isfinite(err) & (s > 0)]
    return kept


def _ulp_errors(float_values: np.ndarray, half: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """(|B - A| in float16 ulps at A, |B - A| / |A| where A != 0) over a strided subset of large
    tensors; elements where either side is not finite (or A overflows float16) are left out."""
    n = half.size
    idx = np.arange(0, n, max(1, -(-n // MAX_ELEMENTS_PER_TENSOR)))
    av = np.asarray(float_values).reshape(-1)[idx].astype(np.float64)
    bv = np.asarray(half).reshape(-1)[idx].astype(np.float64)
    ulps = ulp_errors(av, bv)
    ok = np.isfinite(ulps)
    if not np.any(ok):
        return None
    nz = ok & (av != 0)
    return ulps[ok], np.abs(bv[nz] - av[nz]) / np.abs(av[nz])


def _median_above(e: np.ndarray, limit: float) -> float | None:
    """`np.median(e)` when it is above `limit`, else None. Counting the values above the limit
    settles most tensors without the partition a median takes (the median of n values is above
    the limit when more than half are, and not when fewer than half minus one are)."""
    if e.size == 0:
        return None
    if 2 * int(np.count_nonzero(e > limit)) < e.size - 1:
        return None
    m = median_value(e)
    return m if m > limit else None


def _step_errors(float_values: np.ndarray, b: WeightSource) -> np.ndarray | None:
    """|dequant(B) - A| / step of B per element (a strided subset of large tensors, read without
    dequantizing the whole tensor), or None when B's parameters do not fit its values."""
    q = b.quantization
    if q is None or not q.scales:
        return None
    scales = np.asarray(q.scales, np.float64)
    zps = np.asarray(q.zero_points, np.float64)
    if np.any(scales <= 0) or not np.all(np.isfinite(scales)):
        return None
    n = b.values.size
    idx = np.arange(0, n, max(1, -(-n // MAX_ELEMENTS_PER_TENSOR)))
    qv = b.values.reshape(-1)[idx].astype(np.float64)
    av = np.asarray(float_values).reshape(-1)[idx].astype(np.float64)
    if len(scales) == 1:
        s, z = scales[0], zps[0] if len(zps) else 0.0
    else:
        axis = q.quantized_dimension
        if b.values.ndim == 0 or b.values.shape[axis] != len(scales):
            return None
        inner = int(np.prod(b.values.shape[axis + 1 :], dtype=np.int64))
        ch = (idx // inner) % b.values.shape[axis]  # C order: the index along `axis` (unravel_index without the others)
        s, z = scales[ch], (zps[ch] if len(zps) == len(scales) else 0.0)
    err = np.abs((qv - z) * s - av) / s
    finite: np.ndarray = err[np.isfinite(err)]
    return finite
