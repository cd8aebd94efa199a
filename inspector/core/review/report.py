"""Review report of a float model and its quantized twin: one JSON-ready dict.

`build_report` gathers model summaries, the comparison (a typed `ComparisonResult`, written as
its `compare` JSON),
the worst layers with their weight histograms (float vs dequantized), the audit findings and the
op math of the worst layers. `report_html.render_html` turns it into one self-contained HTML
file; `write_report` writes any of HTML / JSON / CSV / Model Explorer node data atomically.
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from inspector import __version__
from inspector.core.compare.diagnosis import cause_rows
from inspector.core.compare.diagnosis_text import root_cause_lines
from inspector.core.compare.export import inside_lines, to_csv_text, worst_layers
from inspector.core.compare.pairing import pair_models
from inspector.core.compare.result import ComparisonResult
from inspector.core.compare.weights import analyze_tensors, weight_tensor_of
from inspector.core.quantmath.kernel_path import PATH_LABELS, classify, roles
from inspector.core.quantmath.opmath import op_math
from inspector.core.quantmath.quant import tensor_range
from inspector.core.review.audit import audit_model, counts
from inspector.core.tflite.model import Model, Tensor, load_model
from inspector.core.tflite.signatures import select_signature
from inspector.core.writing import json_float

REPORT_SCHEMA = "tflite-inspector-report"
REPORT_VERSION = 1
REPORT_BINS = 96  # histogram bins kept in the report (weights analysis bins are merged down)


def _io(t: Tensor) -> dict[str, Any]:
    q = t.quantization
    return {"name": t.name, "dtype": t.dtype, "shape": list(t.shape_signature),
            "scale": None if q is None or q.per_channel else q.scales[0],
            "zero_point": None if q is None or q.per_channel else q.zero_points[0],
            "range": None if (r := tensor_range(t)) is None else list(r)}  # fmt: skip


def model_card(model: Model) -> dict[str, Any]:
    """What the side-by-side summary shows for one model."""
    sg = model.main
    producers = sg.producers()
    paths = Counter(classify(sg, op, producers) for op in sg.ops)
    weight_bytes: Counter[str] = Counter()
    for s in model.subgraphs:
        for t in s.tensors:
            if t.is_constant:
                weight_bytes[t.dtype] += t.buffer_size
    return {
        "path": model.path,
        "file": Path(model.path).name,
        "size_bytes": model.size_bytes,
        "subgraphs": len(model.subgraphs),
        "ops": sum(len(s.ops) for s in model.subgraphs),
        "tensors": sum(len(s.tensors) for s in model.subgraphs),
        "op_types": dict(Counter(op.type for op in sg.ops).most_common()),
        "kernel_paths": {PATH_LABELS[k]: v for k, v in paths.most_common()},
        "constant_bytes": dict(weight_bytes.most_common()),
        "inputs": [_io(sg.tensors[i]) for i in sg.inputs],
        "outputs": [_io(sg.tensors[i]) for i in sg.outputs],
        "signatures": [s.key for s in model.signatures],
    }


def _merge_bins(edges: np.ndarray, counts_list: list[np.ndarray | None], max_bins: int,
                align: int = 1) -> tuple[list[float], list[list[int] | None]]:  # fmt: skip
    """Merge consecutive bins down to <= max_bins (about); with grid-aligned bins (`align` sub-bins
    per quantization step) whole steps are merged, so every merged bin holds the same number of
    grid points and the dequantized histogram does not alias into a comb."""
    n = len(edges) - 1
    k = max(1, math.ceil(n / max_bins))
    if align > 1:
        k = align * max(1, math.ceil(k / align))
    idx = list(range(0, n, k)) + [n]
    merged: list[list[int] | None] = []
    for c in counts_list:
        if c is None:
            merged.append(None)
            continue
        merged.append([int(np.sum(c[a:b])) for a, b in zip(idx[:-1], idx[1:], strict=True)])
    return [float(edges[i]) for i in idx], merged


def weight_histogram(fm: Model | None, qm: Model, op_index: int, float_tensor: int | None) -> dict[str, Any] | None:
    """Float vs dequantized weights of a quantized op (None for ops without weights)."""
    sg = qm.main
    op = sg.ops[op_index]
    if roles(op) is None:
        return None
    qt = weight_tensor_of(sg, op)
    if qt is None:
        return None
    ta = fm.main.tensors[float_tensor] if fm is not None and float_tensor is not None else None
    a = analyze_tensors(fm, ta, qm, sg.tensors[qt])
    if a is None:
        return None
    align = a.bins_per_step if a.grid_step else 1
    edges, (ca, cb) = _merge_bins(a.edges, [a.a_counts, a.b_counts], REPORT_BINS, align)
    m = a.metrics
    return {
        "tensor_index": qt, "tensor_name": sg.tensors[qt].name, "float_tensor_index": float_tensor,
        "edges": edges, "float_counts": ca, "quant_counts": cb,
        "clip_lo": a.clip_lo, "clip_hi": a.clip_hi, "quant_dtype": a.quant_dtype,
        "per_channel": bool(a.quant is not None and a.quant.per_channel),
        "sqnr_db": None if m is None else json_float(m.sqnr_db),
        "max_abs": None if m is None else m.max_abs,
        "elements": a.used_elements, "notes": list(a.notes),
        "float16": None if a.float16 is None else a.float16.to_json(),
    }  # fmt: skip


def build_report(float_path: str, quant_path: str | None = None, comparison: ComparisonResult | None = None,
                 *, worst_n: int = 5, comparison_error: str | None = None, signature: str | None = None,
                 provenance: dict[str, Any] | None = None) -> dict[str, Any]:  # fmt: skip
    """The report content. With one model, it is audited alone (no comparison, no histograms).
    `comparison_error`: why the comparison could not run (e.g. the runtime refused the model).
    `signature`: the signature reviewed when there is no comparison (else the comparison's).
    `provenance`: where model B comes from when it is a version made here
    (`state.provenance.version_provenance`): written as the report's "provenance"."""
    key = comparison.signature if comparison is not None else signature  # op indices of a signature's comparison are its subgraph's
    fm = select_signature(load_model(float_path), key)
    qm = select_signature(load_model(quant_path), key) if quant_path else None
    target = qm or fm
    findings = audit_model(target, comparison, fm if qm is not None else None)
    worst = worst_layers(comparison, worst_n) if qm is not None else []
    pairing = pair_models(fm, qm) if qm is not None and worst else None
    worst_out = []
    for lay in worst:
        op_i = lay.op_index
        hist = None
        if pairing is not None and qm is not None and 0 <= op_i < len(qm.main.ops):  # a pairing: model B is open
            qt = weight_tensor_of(qm.main, qm.main.ops[op_i])
            ft = pairing.float_for_quant(qt) if qt is not None else None
            hist = weight_histogram(fm, qm, op_i, ft)
        worst_out.append({**lay.to_json(), "subgraph": target.main.index, "weights": hist})
    # Op indices of the worst layers are the compared subgraph's (the signature's): explain those ops.
    op_maths = {str(lay.op_index): op_math(target, lay.op_index, comparison=comparison).to_json()
                for lay in worst if 0 <= lay.op_index < len(target.main.ops)}  # fmt: skip
    return {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "tool_version": __version__,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "models": {"float": model_card(fm), "quant": None if qm is None else model_card(qm)},
        "audited_model": target.path,
        "signature": key,  # the compared signature (None: subgraph 0)
        "subgraph": target.main.index,  # the subgraph worst layers and op math index
        "comparison": None if comparison is None else comparison.to_json(),
        "comparison_error": comparison_error,
        "worst_layers": worst_out,
        "headline": [] if comparison is None else root_cause_lines(comparison),  # the root causes, measured (issue 33)
        "causes": [] if comparison is None else cause_rows(comparison.layers),
        "inside": [] if comparison is None else inside_lines(comparison),  # channels / slices far below their tensor
        "audit": {"counts": counts(findings), "findings": [f.to_json() for f in findings]},
        "op_math": op_maths,
        "provenance": provenance,
    }


def write_report(report: dict[str, Any], comparison: ComparisonResult | None = None, *, html: str | None = None,
                 json_path: str | None = None, csv: str | None = None,
                 model_explorer: str | None = None, metric: str = "sqnr_db") -> list[str]:  # fmt: skip
    """Write the requested files atomically ('-' for JSON means standard output); returns what was
    written. `comparison`: the typed result the report was built from (CSV, Model Explorer)."""
    from inspector.core.errors import InputError
    from inspector.core.review.model_explorer import node_data
    from inspector.core.review.report_html import render_html
    from inspector.core.writing import atomic_write_text, to_json_text, write_json_output

    inputs = {Path(p).resolve() for p in (report["models"]["float"]["path"],
                                          (report["models"].get("quant") or {}).get("path")) if p}  # fmt: skip
    for dest in (html, json_path, csv, model_explorer):
        if dest and dest != "-" and Path(dest).resolve() in inputs:
            raise InputError("refusing to overwrite an input model with a report", dest)
    if (csv or model_explorer) and comparison is None:
        raise InputError("--csv and --model-explorer need a comparison (give both FLOAT and QUANT models)")
    written = []
    if html:
        from inspector.core.review.report_graph import report_graph_svg

        atomic_write_text(html, render_html(report, graph_svg=report_graph_svg(report, comparison)))
        written.append(html)
    if json_path:
        write_json_output(report, json_path)
        written.append(json_path)
    if csv and comparison is not None:  # checked above: no CSV without a comparison
        atomic_write_text(csv, to_csv_text(comparison))
        written.append(csv)
    if model_explorer and comparison is not None:  # as above
        quant = report["models"].get("quant")
        model = load_model(quant["path"]) if quant else None
        atomic_write_text(model_explorer, to_json_text(node_data(comparison, metric, model=model)) + "\n")
        written.append(model_explorer)
    return written
