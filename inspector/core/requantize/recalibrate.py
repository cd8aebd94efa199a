"""Activation re-calibration: new scale/zero-point for a selected op's output tensor.

The range comes from the observed float values of A's paired tensor on the calibration samples
(`samples.holdout`; the held-out rest measures the gain): min/max, MSE-optimal clipping, or
percentile:P (the (100-P)th and Pth percentiles). The new parameters are
propagated through ops that must keep scale and zero-point (`opmath.SAME_SCALE_OPS`, the
audit's table): forward to their outputs and back to their inputs. Refused for fixed-output
ops (SOFTMAX, LOGISTIC, TANH: `opmath.fixed_output_params`), for graph inputs and where a
CONCATENATION would need its other inputs changed. Kernels derive their multipliers from
scales at prepare time, so only tensor parameters change, plus the int32 bias of every
conv/FC consumer of a changed tensor (its bias scale is S_in * S_w): re-derived from B's own
bias value at the new S_in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.errors import InputError
from inspector.core.quantmath.opmath import SAME_SCALE_OPS, fixed_output_params
from inspector.core.requantize.measure import Observed
from inspector.core.requantize.surgery import Surgery, quant_t
from inspector.core.requantize.weight_requant import own_tensor
from inspector.core.tflite import edit as fe
from inspector.core.tflite.model import Model, Tensor
from inspector.core.tflite.op_facts import OP_CLAMPS, SURGICAL_WEIGHT_OPS

if TYPE_CHECKING:
    from inspector.core.samples.spec import Sample  # imported where used: samples load late

MSE_GRID = np.linspace(0.3, 1.0, 36)
BIAS_TYPES = {schema.TensorType.INT32: (np.int32, 2**31), schema.TensorType.INT64: (np.int64, 2**63)}


def choose_range(obs: Observed, calibration: str) -> tuple[float, float]:
    if calibration == "minmax":
        return obs.lo, obs.hi
    if calibration.startswith("percentile:"):
        p = float(calibration.split(":", 1)[1])
        return float(np.percentile(obs.values, 100.0 - p)), float(np.percentile(obs.values, p))
    if calibration == "mse":
        best, best_err = (obs.lo, obs.hi), np.inf
        for a in MSE_GRID:
            lo, hi = a * obs.lo, a * obs.hi
            scale, zp = int8_params(lo, hi)
            q = np.clip(np.round(obs.values / scale) + zp, -128, 127)
            err = float(np.mean((obs.values - scale * (q - zp)) ** 2))
            if err < best_err:
                best, best_err = (lo, hi), err
        return best
    raise InputError(f"unknown calibration '{calibration}'")


def int8_params(lo: float, hi: float) -> tuple[float, int]:
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    scale = (hi - lo) / 255.0 if hi > lo else 1e-8
    zp = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return float(scale), zp


def same_scale_group(s: Surgery, tensor: int) -> list[int]:
    """Tensors that must share `tensor`'s parameters (through SAME_SCALE_OPS, both directions)."""
    sg = s.qm.main
    producers, consumers = sg.producers(), sg.consumers()
    group, todo = [tensor], [tensor]
    while todo:
        t = todo.pop()
        linked: list[int] = []
        p = producers.get(t)
        if p is not None and p.type in SAME_SCALE_OPS:
            if p.type == "CONCATENATION":
                raise InputError(f"'{sg.tensors[t].name}' is the output of a CONCATENATION, whose inputs would all have to change", s.qm.path)
            linked += [i for i in p.inputs[:1] if i >= 0 and not sg.tensors[i].is_constant]
        for c in consumers.get(t, []):
            if c.type in SAME_SCALE_OPS:
                if c.type == "CONCATENATION":
                    raise InputError(f"'{sg.tensors[t].name}' flows into a CONCATENATION, whose other inputs would have to change too", s.qm.path)
                if c.inputs and c.inputs[0] == t:
                    linked += [o for o in c.outputs if o >= 0]
        for x in linked:
            if x not in group and sg.tensors[x].dtype == sg.tensors[tensor].dtype:
                group.append(x)
                todo.append(x)
    return group


_FUSED_CLAMP = {name: max(abs(lo), abs(hi)) for name, (lo, hi) in OP_CLAMPS.items()}  # the largest |bound| of a fused clamp


def recalibrate(s: Surgery, ops: tuple[int, ...], calibration: str, observed: dict[int, Observed]) -> None:
    sg = s.qm.main
    for i in ops:
        op = sg.ops[i]
        if fixed_output_params(op, sg) is not None:
            raise InputError(f"{s.describe(i)} has fixed output parameters ({op.type}); they cannot be re-calibrated", s.qm.path)
        t = op.outputs[0]
        tt = sg.tensors[t]
        if tt.dtype not in ("int8", "int16") or tt.quantization is None or tt.quantization.per_channel:
            raise InputError(f"{s.describe(i)}: its output is not a per-tensor int8/int16 tensor", s.qm.path)
        lo, hi = choose_range(observed[t], calibration)
        if tt.dtype == "int16":
            scale, zp = max(abs(lo), abs(hi), 1e-12) / 32767.0, 0
        else:
            scale, zp = int8_params(lo, hi)
        clamp = _FUSED_CLAMP.get(str(op.options.get("fused_activation_function", "NONE")))
        if clamp is not None and tt.dtype == "int8" and clamp / scale >= 2**31:
            # LiteRT quantizes the fused clamp with the output scale (kernel_util.cc, no_integer_overflow_from_quantization)
            raise InputError(f"{s.describe(i)}: its float range hardly leaves 0 on the calibration samples "
                             f"([{lo:.3g}, {hi:.3g}]): the scale it gives ({scale:.3g}) overflows the fused "
                             "activation's clamp in int32, which LiteRT refuses", s.qm.path)  # fmt: skip
        group = same_scale_group(s, t)
        for g in group:
            if g in sg.inputs:
                raise InputError(f"re-calibrating '{tt.name}' would change the model input '{sg.tensors[g].name}'", s.qm.path)
            for c in sg.consumers().get(g, []):
                if fixed_output_params(c, sg) is not None and c.type in SAME_SCALE_OPS:
                    raise InputError(f"'{sg.tensors[g].name}' feeds {c.type}, which needs fixed parameters", s.qm.path)
        for g in group:
            _rederive_consumer_biases(s, g, scale)
            s.bsg.tensors[g].quantization = quant_t(np.array([scale]), np.array([zp]), 0)
        extra = f" (and {len(group) - 1} tensor(s) that must share them)" if len(group) > 1 else ""
        s.notes.append(f"re-calibrated ({calibration}): {s.describe(i)} -> scale {scale:.6g}, zero-point {zp}{extra}")


def _rederive_consumer_biases(s: Surgery, tensor: int, new_scale: float) -> None:
    old = s.bsg.tensors[tensor].quantization
    old_scale = float(old.scale[0])
    for c in fe.consumers(s.bsg, tensor):
        if s.qm.main.ops[c].type not in SURGICAL_WEIGHT_OPS:
            continue
        op = s.bsg.operators[c]
        if int(op.inputs[0]) != tensor or len(op.inputs) < 3 or op.inputs[2] < 0:
            continue
        b_idx = own_tensor(s, c, 2)
        bt = s.bsg.tensors[b_idx]
        if bt.type not in BIAS_TYPES:
            raise InputError(f"{s.describe(c)} reads the re-calibrated tensor but its bias is not int32/int64", s.qm.path)
        dtype, lim = BIAS_TYPES[bt.type]
        b = s.b_constant(c, bt).astype(np.float64)
        bq = np.asarray(bt.quantization.scale, np.float64)
        new_bs = bq * (new_scale / old_scale)
        new = np.clip(np.round(b * bq / new_bs), -lim, lim - 1).astype(dtype)
        fe.set_buffer(s.bm, bt, new, share_ok=True)
        bt.quantization = quant_t(new_bs, np.zeros(len(new_bs), np.int64), 0)


def integer_inputs(qm: Model, op_index: int) -> list[int]:
    """The graph inputs op `op_index` reads that are per-tensor int8/uint8 with a scale and zero
    point (an integer-input model: the caller quantizes with them; no QUANTIZE op)."""
    sg = qm.main
    out = []
    for t in sg.ops[op_index].inputs:
        tt = sg.tensors[t] if t >= 0 else None
        if (tt is not None and t in sg.inputs and t not in out and tt.dtype in ("int8", "uint8")
                and tt.quantization is not None and len(tt.quantization.scales) == 1):  # fmt: skip
            out.append(t)
    return out


def input_values(qm: Model, samples: Sequence[Sample], tensor: int) -> list[np.ndarray]:
    """The float values the samples give graph input `tensor` (before the caller quantizes them)."""
    from inspector.core.samples.spec import feed_order

    pos = list(qm.main.inputs).index(tensor)
    return [np.asarray(s.inputs[feed_order(qm, s)[pos]], np.float64) for s in samples]


def input_params(tt: Tensor) -> tuple[float, int]:
    """Scale and zero point of an integer model input (`integer_inputs` keeps those that have them)."""
    q = tt.quantization
    if q is None or not q.scales:
        raise InputError(f"model input '{tt.name}' has no scale and zero point")
    return float(q.scales[0]), int(q.zero_points[0])


def input_grid(tt: Tensor) -> tuple[float, float]:
    """The float range an integer input's scale and zero point can represent."""
    info = np.iinfo(tt.dtype)
    s, z = input_params(tt)
    return (info.min - z) * s, (info.max - z) * s


def widen_input(s: Surgery, ops: tuple[int, ...], samples: Sequence[Sample]) -> list[dict[str, Any]]:
    """Widen each integer graph input that `ops` read to the range of its real (float) values on
    `samples` (never narrower than today's): its new scale and zero point, the biases of the ops
    reading it re-derived. The model's interface changes: the caller must quantize its inputs with
    the new parameters; one record per input (`interface_change`)."""
    sg = s.qm.main
    changes: list[dict[str, Any]] = []
    for i in ops:
        inputs = integer_inputs(s.qm, i)
        if not inputs:
            raise InputError(f"{s.describe(i)} reads no int8/uint8 model input with a scale and zero point", s.qm.path)
        for t in inputs:
            if any(c["tensor"] == t for c in changes):
                continue
            tt = sg.tensors[t]
            values = input_values(s.qm, samples, t)
            old_lo, old_hi = input_grid(tt)
            lo = min(old_lo, min(float(v.min()) for v in values))
            hi = max(old_hi, max(float(v.max()) for v in values))
            info = np.iinfo(tt.dtype)
            scale = (hi - lo) / float(info.max - info.min)
            zp = int(np.clip(np.round(info.min - lo / scale), info.min, info.max))
            old_scale, old_zp = input_params(tt)
            group = same_scale_group(s, t)
            for g in group:
                for c in sg.consumers().get(g, []):
                    if fixed_output_params(c, sg) is not None and c.type in SAME_SCALE_OPS:
                        raise InputError(f"'{sg.tensors[g].name}' feeds {c.type}, which needs fixed parameters", s.qm.path)
            for g in group:
                _rederive_consumer_biases(s, g, scale)
                s.bsg.tensors[g].quantization = quant_t(np.array([scale]), np.array([zp]), 0)
            change = {"input": tt.name, "tensor": t, "dtype": tt.dtype, "scale": scale, "zero_point": zp,
                      "old_scale": old_scale, "old_zero_point": old_zp, "range": [lo, hi], "old_range": [old_lo, old_hi]}  # fmt: skip
            changes.append(change)
            s.notes.append(interface_statement(change))
    return changes


def interface_statement(change: dict[str, Any]) -> str:
    """The plain statement that the model's interface changed (CLI output, JSON, report)."""
    return (f"INTERFACE CHANGE: model input '{change['input']}' ({change['dtype']}) now has scale {change['scale']:.6g} "
            f"and zero point {change['zero_point']} (was {change['old_scale']:.6g} and {change['old_zero_point']}; range "
            f"[{change['old_range'][0]:.4g}, {change['old_range'][1]:.4g}] -> [{change['range'][0]:.4g}, {change['range'][1]:.4g}]): "
            "the caller must quantize its inputs with the new scale and zero point")  # fmt: skip
