"""Audit rules for float16-stored constants (the float16 post-training mode).

Each float16 constant of the audited model (weights and biases behind DEQUANTIZE) is checked
for what float16 storage loses:
- `float16-overflow` (error): A's float32 value beyond 65504, stored as inf (the op computes
  inf/NaN) or saturated to ±65504 by TF's converter (silently wrong); alone: inf or ±65504 stored.
- `float16-nan` (error): NaN stored.
- `float16-flush-to-zero`: values nonzero in A and zero in B (warning), or stored as float16
  subnormals (|x| < 2^-14, info), which accelerators that flush subnormals (many GPU delegates)
  read as zero.
With the float model A, each constant is read against its paired A tensor (same shape); alone,
only what the stored values show (inf, NaN, subnormals) is reported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from inspector.core.compare.pairing import pair_models
from inspector.core.quantmath.float16 import (
    FLOAT16_MIN_NORMAL,
    Float16Error,
    float16_error,
    overflows,
)
from inspector.core.tflite.model import Model, Op, Subgraph, Tensor

MAX_NAMED = 3  # example values named per finding


def _f(severity: str, rule: str, op: Op | None, t: Tensor, message: str, observed: Any = None,
       expected: Any = None) -> dict[str, Any]:
    return {
        "severity": severity, "rule": rule,
        "op_index": None if op is None else op.index, "op_type": None if op is None else op.type,
        "tensor_index": t.index, "tensor_name": t.name,
        "message": message, "observed": observed, "expected": expected,
    }  # fmt: skip


def float16_constants(sg: Subgraph) -> list[tuple[Tensor, Op | None]]:
    """(float16 constant, the op that reads it) of a subgraph (its DEQUANTIZE, usually). Block
    scales / zero points of blockwise weights are float16 too, but quantization parameters
    (checked by the blockwise rules), not float16-stored values."""
    readers: dict[int, Op] = {}
    for op in sg.ops:
        for i in op.inputs:
            if i >= 0:
                readers.setdefault(i, op)
    params = set()
    for t in sg.tensors:
        bw = t.quantization.blockwise if t.quantization is not None else None
        if bw is not None:
            params |= {bw.scale_tensor, bw.zero_point_tensor}
    return [(t, readers.get(t.index)) for t in sg.tensors
            if t.dtype == "float16" and t.is_constant and t.index not in params]  # fmt: skip


def check_float16(model: Model, float_model: Model | None = None) -> list[tuple[int, dict[str, Any]]]:
    """(subgraph, finding) for the float16 constants of every subgraph of `model`; those of its
    chosen subgraph are read against their paired tensors of `float_model` when given."""
    out: list[tuple[int, dict[str, Any]]] = []
    for sg in model.subgraphs:
        consts = float16_constants(sg)
        if not consts:
            continue
        pairing = None
        if float_model is not None and sg.index == model.main.index:
            try:
                pairing = pair_models(float_model, model)
            except Exception:  # noqa: BLE001 - no pairing: the stored values are still checked
                pairing = None
        for t, op in consts:
            b = model.tensor_data(t)
            if b is None:
                continue
            a = None
            if pairing is not None and float_model is not None:  # a pairing exists only with model A open
                fi = pairing.float_for_quant(t.index)
                if fi is not None:
                    av = float_model.tensor_data(float_model.main.tensors[fi])
                    if av is not None and av.shape == b.shape and av.dtype.kind == "f":
                        a = av
            out += [(sg.index, f) for f in _findings(op, t, a, float16_error(a, b))]
    return out


def _findings(op: Op | None, t: Tensor, a: np.ndarray | None, e: Float16Error) -> list[dict[str, Any]]:
    out = []
    n = e.elements
    if e.overflow:
        how = []
        if e.overflow > e.saturated:
            how.append(f"{e.overflow - e.saturated} stored as inf (the op computes inf or NaN)")
        if e.saturated:
            how.append(f"{e.saturated} saturated to ±65504 (silently wrong weights)")
        if a is not None:
            big = ", ".join(f"{v:.6g}" for v in a[overflows(a)].ravel()[:MAX_NAMED])
            head = f"{e.overflow} of {n} values are beyond the float16 range (|x| > 65504, e.g. {big} in the float model)"
        else:
            head = f"{e.overflow} of {n} stored values are inf or at the float16 limit ±65504, the mark of values beyond its range"
        out.append(_f("error", "float16-overflow", op, t,
                      f"{head}: {'; '.join(how)}. Keep this tensor float32 or rescale the layer.",
                      observed=e.overflow, expected=0))  # fmt: skip
    if e.nan:
        out.append(_f("error", "float16-nan", op, t,
                      f"{e.nan} of {n} stored float16 values are NaN: every output that reads them is NaN.",
                      observed=e.nan, expected=0))  # fmt: skip
    if e.flushed:
        out.append(_f("warning", "float16-flush-to-zero", op, t,
                      f"{e.flushed} of {n} values nonzero in the float model are zero in float16 (|x| below 2^-25 "
                      "≈ 3e-8 rounds to zero)"
                      + (f"; {e.subnormal} more are float16 subnormals (|x| < 2^-14), read as zero by hardware "
                         "that flushes subnormals" if e.subnormal else "") + ".",
                      observed=e.flushed, expected=0))  # fmt: skip
    elif e.subnormal:
        out.append(_f("info", "float16-flush-to-zero", op, t,
                      f"{e.subnormal} of {n} values are float16 subnormals (|x| < 2^-14 ≈ 6.1e-5, fewer significant "
                      "bits); accelerators that flush subnormals (many GPU delegates) read them as zero.",
                      observed=e.subnormal, expected=f"|x| >= {FLOAT16_MIN_NORMAL:g} or 0"))  # fmt: skip
    return out
