"""Model summaries for `info`: a JSON-ready dict and a readable text table."""

from __future__ import annotations

from collections import Counter

from inspector.core.model import Model, Tensor
from inspector.core.quant import tensor_range


def tensor_json(t: Tensor) -> dict:
    rng = tensor_range(t)
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
        "quantization": None if t.quantization is None else t.quantization.to_json(),
        "representable_range": None if rng is None else list(rng),
    }


def model_summary_json(model: Model) -> dict:
    return {
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
                "tensors": [tensor_json(t) for t in sg.tensors],
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
    }


def _fmt_quant(t: Tensor) -> str:
    q = t.quantization
    if q is None:
        return ""
    if q.per_channel:
        return f"per-channel x{q.num_channels} (dim {q.quantized_dimension}) S {min(q.scales):.3g}..{max(q.scales):.3g}"
    rng = tensor_range(t)
    r = f" [{rng[0]:.4g}, {rng[1]:.4g}]" if rng else ""
    return f"S={q.scales[0]:.4g} Z={q.zero_points[0]}{r}"


def model_summary_text(model: Model) -> str:
    lines = [f"{model.path}  ({model.size_bytes:,} bytes, schema v{model.version})"]
    if model.signatures:
        lines.append("signatures: " + ", ".join(s.key for s in model.signatures))
    else:
        lines.append("signatures: none")
    for sg in model.subgraphs:
        types = Counter(t.dtype for t in sg.tensors)
        lines.append(
            f"\nsubgraph {sg.index} {sg.name!r}: {len(sg.ops)} ops, {len(sg.tensors)} tensors "
            f"({', '.join(f'{n} {d}' for d, n in types.most_common())})"
        )
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
