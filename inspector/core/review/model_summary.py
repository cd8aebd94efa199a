"""Model summaries for `info`: a JSON-ready dict and a readable text table."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from inspector.core.quantmath.blockwise import BlockwiseError, blockwise_params
from inspector.core.quantmath.quant import tensor_range
from inspector.core.review.audit_float16 import float16_constants
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.litertlm import Bundle
from inspector.core.tflite.model import Model, Subgraph, Tensor


def blockwise_json(model: Model, t: Tensor) -> dict[str, Any] | None:
    """Block size, block counts and scale range of a blockwise tensor (its problem when they do not fit)."""
    q = t.quantization
    if q is None or q.blockwise is None:
        return None
    out: dict[str, Any] = q.blockwise.to_json()
    try:
        p = blockwise_params(model, t)
    except BlockwiseError as e:
        out["problem"] = str(e)
        return out
    out.update(blocks_per_row=p.blocks_per_row, num_blocks=p.num_blocks, scale_range=list(p.scale_range))
    if t.dtype in INT_LIMITS:
        qmin, qmax = INT_LIMITS[t.dtype]
        z = 0 if p.zero_points is None else p.zero_points
        out["representable_range"] = [float(np.min(p.scales * (qmin - z))), float(np.max(p.scales * (qmax - z)))]
    return out


def tensor_json(t: Tensor, model: Model | None = None) -> dict[str, Any]:
    rng = tensor_range(t)
    bw = blockwise_json(model, t) if model is not None else None
    if bw is not None and "representable_range" in bw:
        rng = tuple(bw["representable_range"])
    return {
        "index": t.index,
        "name": t.name,
        "dtype": t.dtype,
        "shape": list(t.shape),
        "shape_signature": list(t.shape_signature),
        "is_constant": t.is_constant,
        "is_variable": t.is_variable,
        "buffer_size": t.buffer_size,
        "sparse": t.sparsity is not None,
        "quantization": None if t.quantization is None else t.quantization.to_json() | ({"blockwise": bw} if bw else {}),
        "representable_range": None if rng is None else list(rng),
    }


def float16_weights(sg: Subgraph) -> dict[str, Any]:
    """Constants stored as float16 (the float16 post-training mode: weights and biases read
    through DEQUANTIZE; not blockwise scales): how many, their values and their bytes in the file."""
    ts = [t for t, _ in float16_constants(sg)]
    behind = {op.inputs[0] for op in sg.ops if op.type == "DEQUANTIZE" and op.inputs and op.inputs[0] >= 0}
    return {
        "tensors": len(ts),
        "elements": sum(t.num_elements for t in ts),
        "bytes": sum(t.buffer_size for t in ts),
        "behind_dequantize": sum(1 for t in ts if t.index in behind),
    }


def model_summary_json(model: Model) -> dict[str, Any]:
    f16 = [float16_weights(sg) for sg in model.subgraphs]
    return {
        "float16_weights": {k: sum(d[k] for d in f16) for k in ("tensors", "elements", "bytes", "behind_dequantize")},
        "path": model.path,
        "size_bytes": model.size_bytes,
        "version": model.version,
        "description": model.description,
        "subgraphs": [
            {
                "index": sg.index,
                "name": sg.name,
                "inputs": list(sg.inputs),
                "outputs": list(sg.outputs),
                "tensors": [tensor_json(t, model) for t in sg.tensors],
                "ops": [
                    {
                        "index": op.index,
                        "type": op.type,
                        "custom": op.is_custom,
                        "version": op.version,
                        "inputs": list(op.inputs),
                        "outputs": list(op.outputs),
                        "options": op.options,
                    }
                    for op in sg.ops
                ],
            }
            for sg in model.subgraphs
        ],
        "signatures": [
            {"key": s.key, "subgraph": s.subgraph, "inputs": s.inputs, "outputs": s.outputs}
            for s in model.signatures
        ],
        "metadata": sorted(model.metadata),
        "format_warnings": list(model.format_warnings),  # inconsistencies the runtime accepts
    }


def _fmt_quant(t: Tensor) -> str:
    q = t.quantization
    if q is None:
        return ""
    if q.blockwise is not None:
        return f"blockwise, block size {q.blockwise.block_size}"
    if q.per_channel:
        return f"per-channel x{q.num_channels} (dim {q.quantized_dimension}) S {min(q.scales):.3g}..{max(q.scales):.3g}"
    rng = tensor_range(t)
    r = f" [{rng[0]:.4g}, {rng[1]:.4g}]" if rng else ""
    return f"S={q.scales[0]:.4g} Z={q.zero_points[0]}{r}"


def _blockwise_lines(model: Model, tensors: Sequence[Tensor]) -> list[str]:
    """Blockwise weight tensors (op inputs, so the op list does not show them): one line per
    dtype and block size, plus one per tensor whose parameters do not fit."""
    groups: dict[tuple[str, int], list[dict[str, Any]]] = {}
    out = []
    for t in tensors:
        bw = blockwise_json(model, t)
        if bw is None:
            continue
        if "problem" in bw:
            out.append(f"  blockwise {t.name}: {t.dtype}{list(t.shape)} block size {bw['block_size']}: {bw['problem']}")
        else:
            groups.setdefault((t.dtype, bw["block_size"]), []).append(bw)
    for (dtype, block), items in groups.items():
        lo = min(b["scale_range"][0] for b in items)
        hi = max(b["scale_range"][1] for b in items)
        n = sum(b["num_blocks"] for b in items)
        out.insert(0, f"  blockwise weights: {len(items)} {dtype} tensors, block size {block}, {n:,} blocks, "
                      f"block scales {lo:.4g}..{hi:.4g}")  # fmt: skip
    return out


def model_summary_text(model: Model) -> str:
    lines = [f"{model.path}  ({model.size_bytes:,} bytes, schema v{model.version})"]
    if model.signatures:
        lines.append("signatures: " + ", ".join(s.key for s in model.signatures))
    else:
        lines.append("signatures: none")
    lines += [f"warning: {w}" for w in model.format_warnings]
    for sg in model.subgraphs:
        types = Counter(t.dtype for t in sg.tensors)
        lines.append(
            f"\nsubgraph {sg.index} {sg.name!r}: {len(sg.ops)} ops, {len(sg.tensors)} tensors "
            f"({', '.join(f'{n} {d}' for d, n in types.most_common())})"
        )
        lines += _blockwise_lines(model, sg.tensors)
        f16 = float16_weights(sg)
        if f16["tensors"]:
            lines.append(f"  float16 weights: {f16['tensors']} constant tensors stored as float16 ({f16['elements']:,} values, "
                         f"{f16['bytes']:,} bytes), {f16['behind_dequantize']} read through DEQUANTIZE (float32 at load)")  # fmt: skip
        for i in sg.inputs:
            t = sg.tensors[i]
            lines.append(f"  input  {t.name}: {t.dtype}{list(t.shape)} {_fmt_quant(t)}".rstrip())
        for i in sg.outputs:
            t = sg.tensors[i]
            lines.append(f"  output {t.name}: {t.dtype}{list(t.shape)} {_fmt_quant(t)}".rstrip())
        for op in sg.ops:
            outs = [sg.tensors[o] for o in op.outputs if o >= 0]
            desc = "; ".join(f"{t.dtype}{list(t.shape)} {_fmt_quant(t)}".rstrip() for t in outs)
            lines.append(f"  {op.index:4d} {op.type:24s} -> {desc}")
    return "\n".join(lines)


def bundle_summary_text(bundle: Bundle) -> str:
    """`info` of a .litertlm bundle: its sections, and how to address each TFLite one."""
    size = sum(s.size for s in bundle.sections)
    lines = [
        f"{bundle.path}  (.litertlm v{'.'.join(map(str, bundle.version))}, {len(bundle.sections)} sections, "
        f"{size:,} bytes of section data)"
    ]
    if bundle.system:
        lines.append("system metadata: " + ", ".join(f"{k}={v}" for k, v in bundle.system))
    for s in bundle.sections:
        meta = ", ".join(f"{k}={v}" for k, v in s.items)
        use = f"  -> {bundle.path}#{s.index}" if s.is_tflite else ""
        lines.append(f"  #{s.index:<3d} {s.kind:24s} {s.size:>12,} bytes at {s.offset:<10d} {meta}{use}".rstrip())
    if any(s.is_tflite for s in bundle.sections):
        lines.append(f"a TFLite section opens as a model file: give {bundle.path}#N to info, compare, report, gui")
    return "\n".join(lines)
