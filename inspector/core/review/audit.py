"""Audit a quantized model against the TFLite quantization rules (docs/ARCHITECTURE.md, "Quantization rules the audit checks").

`audit_model` returns `Finding`s: severity ("error" breaks the int8/16x8 specification or makes
a kernel compute wrong values; "warning" costs accuracy or speed; "info" explains a choice),
a short rule id, the op and tensor concerned, a message, and observed vs expected values.
Per-op rules live in `audit_rules`; model-level and comparison-based rules are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.clip_threshold import CLIP_RATE
from inspector.core.compare.result import ComparisonResult
from inspector.core.progress import paced
from inspector.core.quantmath.kernel_path import classify
from inspector.core.quantmath.opmath import compared_subgraph, fixed_output_params
from inspector.core.review import audit_rules
from inspector.core.review.audit_float16 import check_float16
from inspector.core.review.audit_mixed import check_mixed_ranges
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.model import Model, Subgraph
from inspector.core.tflite.op_facts import BOUNDARY_OPS

SEVERITIES = ("error", "warning", "info")
SEVERITY_RANK = {"error": 2, "warning": 1, "info": 0}
LOW_RANGE_USE = 0.10  # activations using < 10% of their representable range waste resolution


@dataclass(frozen=True)
class Finding(JsonRecord):
    severity: str
    rule: str
    op_index: int | None = json_field(absent=None)
    op_type: str | None = json_field(absent=None)
    tensor_index: int | None = json_field(absent=None)
    tensor_name: str | None = json_field(absent=None)
    message: str = json_field()
    observed: Any = None
    expected: Any = None
    # the op's / tensor's subgraph (op indices are that subgraph's)
    subgraph: int = json_field(kw_only=True, absent=0)


def audit_model(
    model: Model, comparison: ComparisonResult | None = None, float_model: Model | None = None
) -> list[Finding]:
    """All findings for `model`; `comparison` (the typed result) adds range/clip checks;
    `float_model` (A) lets float16 constants be checked against A's values (overflow, flush)."""
    out: list[Finding] = []
    for sg in model.subgraphs:
        producers = sg.producers()
        paths = {op.index: classify(sg, op, producers) for op in sg.ops}
        for op in paced(sg.ops):
            for f in audit_rules.check_op(model, sg, op, paths[op.index]):
                out.append(Finding(subgraph=sg.index, **f))
        for f in audit_rules.check_activations(sg, producers):
            out.append(Finding(subgraph=sg.index, **f))
        out += _mixed_kernels(sg, paths)
        compared = comparison is not None and compared_subgraph(model, comparison) == sg.index
        out += [Finding(subgraph=sg.index, **f) for f in check_mixed_ranges(sg, comparison if compared else None)]
    out += _io(model) + _format(model)
    out += [Finding(subgraph=si, **f) for si, f in check_float16(model, float_model)]
    if comparison is not None:
        out += _comparison(model, comparison)
    out.sort(key=lambda f: (f.subgraph, -1 if f.op_index is None else f.op_index, -SEVERITY_RANK[f.severity], f.rule))
    return out


def at_or_above(findings: list[Finding], severity: str) -> list[Finding]:
    """Findings whose severity is `severity` or worse (for --fail-on)."""
    if severity not in SEVERITY_RANK:
        raise ValueError(f"unknown severity {severity!r} (use one of {', '.join(SEVERITIES)})")
    return [f for f in findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[severity]]


def counts(findings: list[Finding]) -> dict[str, int]:
    return {s: sum(1 for f in findings if f.severity == s) for s in SEVERITIES}


# ------------------------------------------------------------------ model-level rules
_BOUNDARY = BOUNDARY_OPS


def _mixed_kernels(sg: Subgraph, paths: dict[int, str]) -> list[Finding]:
    """Float compute left in an otherwise integer graph; hybrid ops explained."""
    out = []
    n_int = sum(1 for op in sg.ops if paths[op.index].startswith("full_integer") and op.type not in _BOUNDARY)
    for op in sg.ops:
        path = paths[op.index]
        if op.type in _BOUNDARY:
            continue
        if path == "hybrid":
            out.append(Finding(
                "info", "hybrid-op", op.index, op.type, None, None,
                "Hybrid (dynamic range) op: integer weights, float activations; the input is quantized per batch at run "
                "time, so the op has no output scale. Integer-only accelerators (NPU, DSP, Edge TPU) cannot run it.",
                observed=path, expected="full_integer_int8", subgraph=sg.index))  # fmt: skip
        if n_int and path in ("float", "float16_weights", "weight_only", "hybrid"):
            out.append(Finding(
                "warning", "float-op-in-integer-model", op.index, op.type, None, None,
                f"{op.type} runs a {path.replace('_', ' ')} kernel inside an otherwise integer model ({n_int} integer ops). "
                "Integer-only accelerators cannot run it: the graph is split, this op falls back to the CPU, and "
                "activations are dequantized and requantized around it at every invoke, which costs latency and "
                "delegate round-trips.",
                observed=path, expected="full_integer_int8 or full_integer_16x8", subgraph=sg.index))  # fmt: skip
    return out


def _kind(dtype: str) -> str:
    return "float" if dtype.startswith(("float", "bfloat")) else "int" if dtype in QUANTIZED_DTYPES else "other"


def _io(model: Model) -> list[Finding]:
    sg = model.main
    ins = [sg.tensors[i] for i in sg.inputs]
    outs = [sg.tensors[i] for i in sg.outputs]
    kinds = {_kind(t.dtype) for t in ins + outs} - {"other"}
    n_int = sum(1 for op in sg.ops if classify(sg, op).startswith("full_integer") and op.type not in _BOUNDARY)
    if not n_int or not kinds:
        return []
    desc = ", ".join(f"{t.name}: {t.dtype}" for t in ins + outs)
    if kinds == {"float", "int"}:
        return [Finding(
            "warning", "mixed-io", None, None, None, None,
            "The model mixes float and integer inputs/outputs: callers must quantize some tensors themselves and "
            "read others as float; check that this is intended (inference_input_type / inference_output_type).",
            observed=desc, expected="all float or all integer I/O", subgraph=sg.index)]  # fmt: skip
    if kinds == {"float"}:
        return [Finding(
            "info", "float-io", None, None, None, None,
            "Integer model with float inputs and outputs: QUANTIZE/DEQUANTIZE at the edges run on the CPU. "
            "For integer-only accelerators convert with inference_input_type/inference_output_type = int8.",
            observed=desc, expected="int8 I/O for integer-only targets", subgraph=sg.index)]  # fmt: skip
    return []


def _format(model: Model) -> list[Finding]:
    """File inconsistencies the runtime accepts (the reader opened the file anyway)."""
    return [Finding(
        "warning", "dangling-reference", None, None, None, None,
        f"{w}. The LiteRT interpreter ignores it and runs the model, but other tools may refuse the file; "
        "rewrite it (any requantize or surgical edit of this tool repairs such references).",
        observed=w, expected="every reference names an existing buffer", subgraph=model.main.index)
        for w in model.format_warnings]  # fmt: skip


def _comparison(model: Model, comparison: ComparisonResult) -> list[Finding]:
    """Range-use and clipping findings on the compared subgraph (the comparison's signature's)."""
    si = compared_subgraph(model, comparison)
    if si is None or not 0 <= si < len(model.subgraphs):
        return []
    sg = model.subgraphs[si]
    out = []
    for layer in comparison.layers:
        common = (layer.op_index, layer.op_type, layer.quant_tensor, layer.tensor_name)
        ru, cr = layer.metrics.range_use, layer.metrics.clip_rate
        op_i = layer.op_index
        fixed = fixed_output_params(sg.ops[op_i], sg) if 0 <= op_i < len(sg.ops) else None
        if fixed is not None and ru is not None and ru < LOW_RANGE_USE:
            out.append(Finding(
                "info", "low-range-use", *common,
                f"The float values use only {ru:.1%} of the output range, but {layer.op_type} has a fixed output "
                f"quantization (scale {fixed[0]:g}, zero-point {fixed[1]}) set by the kernel: calibration cannot change it.",
                observed=ru, expected="fixed by the kernel", subgraph=sg.index))  # fmt: skip
        elif ru is not None and ru < LOW_RANGE_USE:
            out.append(Finding(
                "warning", "low-range-use", *common,
                f"The float values use only {ru:.1%} of the range this tensor can represent: most of the 8-bit grid "
                "is never used, so the effective resolution is a few bits. Calibrate on representative data, or "
                "check for outliers that stretched the range.",
                observed=ru, expected=f">= {LOW_RANGE_USE:g}", subgraph=sg.index))  # fmt: skip
        if fixed is not None and cr is not None and cr > CLIP_RATE:
            out.append(Finding(
                "info", "fixed-grid", *common,
                f"{cr:.2%} of the float values lie beyond the last step of {layer.op_type}'s fixed output grid "
                f"(scale {fixed[0]:g}, zero-point {fixed[1]}, set by the kernel): the grid's own rounding at its end, "
                "not a calibration range; calibration cannot change it.",
                observed=cr, expected="fixed by the kernel", subgraph=sg.index))  # fmt: skip
        elif cr is not None and cr > CLIP_RATE:
            out.append(Finding(
                "warning", "clipping", *common,
                f"{cr:.2%} of the float values fall outside the representable range and are clipped: the calibration "
                "range is too narrow for these inputs.",
                observed=cr, expected=f"<= {CLIP_RATE:g}", subgraph=sg.index))  # fmt: skip
    return out
