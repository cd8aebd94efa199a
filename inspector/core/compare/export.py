"""CSV rows and a text table of a ComparisonResult.

CSV: one row per layer. Our metrics carry an `acc_` (accumulated) or `iso_` (isolated) prefix;
the columns of TensorFlow's QuantizationDebugger layer statistics follow with their exact names
and conventions (op_name, tensor_idx, num_elements, stddev, mean_error, max_abs_error,
mean_squared_error, scale, zero_point, tensor_name): error = dequantized quantized - float, taken
from the isolated error when it was computed (what QuantizationDebugger measures), else from the
accumulated one (`qd_source` says which). One difference: max_abs_error is the maximum over all
samples, where QuantizationDebugger averages the per-sample maxima.
"""

from __future__ import annotations

import csv
import io
import math
import numbers
from typing import Any

from inspector.core.compare.diagnosis_text import root_cause_lines
from inspector.core.compare.inside import BELOW_DB, part_verdict, worst_part_db
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.stats.metric_table import MetricSpec, metric_specs, spec
from inspector.core.stats.metrics import METRIC_KEYS, Metrics

QD_COLUMNS = (
    "op_name", "tensor_idx", "num_elements", "stddev", "mean_error", "max_abs_error",
    "mean_squared_error", "scale", "zero_point", "tensor_name",
)
LAYER_COLUMNS = ("op_index", "op_type", "match", "float_tensor", "quant_tensor", "dtype", "shape")
CSV_COLUMNS = (
    LAYER_COLUMNS
    + tuple(f"acc_{k}" for k in METRIC_KEYS)
    + tuple(f"iso_{k}" for k in METRIC_KEYS)
    + QD_COLUMNS
    + ("qd_source",)
)


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, numbers.Real) and not isinstance(v, (bool, numbers.Integral)):
        v = float(v)  # numpy scalars too: repr(np.float64(x)) is "np.float64(x)", not a number
        return "inf" if v == math.inf else "-inf" if v == -math.inf else repr(v)
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return str(int(v))
    return str(v)


def _qd(layer: LayerResult) -> tuple[dict[str, Any], str]:
    m: Metrics = layer.isolated if layer.isolated is not None else layer.metrics
    source = "isolated" if layer.isolated is not None else "accumulated"
    var = max(m.mse - m.mean_error**2, 0.0)
    return {
        "op_name": layer.op_type,
        "tensor_idx": layer.quant_tensor,
        "num_elements": layer.num_elements,
        "stddev": math.sqrt(var),
        "mean_error": -m.mean_error,  # QuantizationDebugger: quantized - float
        "max_abs_error": m.max_abs,
        "mean_squared_error": m.mse,
        "scale": _one(layer.scale),
        "zero_point": _one(layer.zero_point),
        "tensor_name": layer.tensor_name,
    }, source


def _one(v: tuple[float, ...] | tuple[int, ...] | None) -> float | str | None:
    """A per-tensor parameter as its value, per-channel ones space-separated."""
    return None if v is None else (v[0] if len(v) == 1 else " ".join(map(str, v)))


def csv_rows(result: ComparisonResult) -> list[dict[str, Any]]:
    rows = []
    for layer in result.layers:
        row = {
            "op_index": layer.op_index,
            "op_type": layer.op_type,
            "match": layer.match,
            "float_tensor": layer.float_tensor,
            "quant_tensor": layer.quant_tensor,
            "dtype": layer.dtype,
            "shape": "x".join(map(str, layer.shape)),
        }
        for k in METRIC_KEYS:
            row[f"acc_{k}"] = getattr(layer.metrics, k)
            row[f"iso_{k}"] = None if layer.isolated is None else getattr(layer.isolated, k)
        qd, source = _qd(layer)
        row.update(qd)
        row["qd_source"] = source
        rows.append(row)
    return rows


def to_csv_text(result: ComparisonResult) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=CSV_COLUMNS, lineterminator="\n")
    w.writeheader()
    for row in csv_rows(result):
        w.writerow({k: _cell(v) for k, v in row.items()})
    return buf.getvalue()


OUTPUT_KEYS = ("sqnr_db", "mse", "max_abs", "cosine")  # the metrics of a model output's summary line


def _brief(m: Metrics, key: str) -> str:
    """"SQNR 31.20 dB", "MSE 0.0012": a metric in a one-line summary."""
    s = spec(key)
    unit = f" {s.unit}" if s.unit_on_values and s.unit else ""
    return f"{s.label} {s.brief_text(getattr(m, key))}{unit}"


def _fmt(v: object, spec: str = ".2f", none: str = "-") -> str:
    if v is None:
        return none
    if isinstance(v, float) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return format(v, spec)


def _columns() -> list[MetricSpec]:
    """The metrics with a column in the text table, in the metric table's order."""
    return [m for m in metric_specs() if m.column is not None]


def _cell_text(m: MetricSpec, v: float | None) -> str:
    c = m.column
    assert c is not None
    if v is not None and m.percent:
        v = 100 * v
    return f"{_fmt(v, c.spec):>{c.width}}"


def text_table(result: ComparisonResult) -> str:
    iso = result.isolated
    cols = _columns()
    head = f"{'op':>4} {'type':<18} {'tensor':<34} {'match':<9} " + " ".join(f"{c.head:>{c.width}}" for m in cols if (c := m.column) is not None)
    if iso:
        head += f" {'iso SQNR':>8}"
    head += "  cause"
    lines = [
        f"float: {result.float_path}",
        f"quant: {result.quant_path}",
        f"runtime: {result.runtime} ({result.kernels}); {result.samples} samples: {result.inputs}",
        "",
        head,
    ]
    lines[4:4] = [*root_cause_lines(result), ""] if root_cause_lines(result) else []  # the root causes lead
    if result.signature is not None:  # op indices are that signature's subgraph's
        lines.insert(3, f"signature: {result.signature} (op numbers are its subgraph's)")
    if result.state:  # a stateful model: every sample from a reset state, or one stream
        lines.insert(3, result.state)
    for layer in result.layers:
        m = layer.metrics
        name = layer.tensor_name if len(layer.tensor_name) <= 34 else layer.tensor_name[:31] + "..."
        row = f"{layer.op_index:>4} {layer.op_type[:18]:<18} {name:<34} {layer.match[:9]:<9} " + " ".join(
            _cell_text(c, getattr(m, c.key)) for c in cols)
        if iso:
            row += f" {_fmt(None if layer.isolated is None else layer.isolated.sqnr_db):>8}"
        row += f"  {_cause(layer)}"
        lines.append(row.rstrip())
    lines.append("")
    for o in result.outputs:
        lines.append(f"output {o.name}: " + ", ".join(_brief(o.metrics, k) for k in OUTPUT_KEYS))
    lines += inside_lines(result)
    if result.unmatched:
        lines.append(f"unmatched: {len(result.unmatched)}")
        for u in result.unmatched:
            lines.append(f"  {u['side']} op {u['op_index']} {u['op_type']} {u.get('tensor_name', '')}: {u['reason']}")
    return "\n".join(lines)


def inside_lines(result: ComparisonResult, most: int = 8) -> list[str]:
    """Where a channel or slice reads >= 20 dB below its tensor (issue 25): each model output's,
    then the layers', largest gap first (at most `most` layers)."""
    lines = []
    for o in result.outputs:
        v = part_verdict(f"output '{o.name}'", o.metrics.sqnr_db, o.channels, o.slices)
        if v is not None:
            lines.append(f"output {o.name}: {v}")
    found = []
    seen: set[int] = set()
    for lay in result.layers:
        if lay.op_index in seen:
            continue
        seen.add(lay.op_index)
        v = part_verdict(f"op {lay.op_index}", lay.metrics.sqnr_db, lay.channels, lay.slices)
        low = worst_part_db(lay.channels, lay.slices, live=True)
        if v is not None and low is not None:
            found.append((low - lay.metrics.sqnr_db, lay.op_index, v))
    if found:
        lines.append(f"inside the tensors ({len(found)} layer(s) with a channel or slice >= {BELOW_DB:g} dB below the tensor):")
        for _, op, v in sorted(found)[:most]:
            lines.append(f"  op {op}: {v}")
        if len(found) > most:
            lines.append(f"  ... and {len(found) - most} more (compare --json: each layer's \"channels\" and \"slices\")")
    return lines


def _cause(layer: LayerResult) -> str:
    """'clipping -> recalibrate op 3', 'inherited from op 3', '' (none)."""
    d = layer.diagnosis
    if d is None or d.cause == "none":
        return ""
    if d.cause == "inherited":
        return f"inherited from op {d.source_op}" if d.source_op is not None else "inherited"
    fix = f" -> {d.fix.edit} op {','.join(map(str, d.fix.ops))}" if d.fix is not None else ""
    return d.cause + fix


def worst_layers(result: ComparisonResult | None, n: int = 5, isolated: bool = False) -> list[LayerResult]:
    """The n layers with the lowest (accumulated, or isolated) SQNR, worst first. Layers without
    a finite SQNR (identical tensors, no isolated value) never count. Their op indices are the
    compared subgraph's (`result.signature`'s): look them up in a view through that signature."""
    if result is None:
        return []

    def key(layer: LayerResult) -> float:
        m = layer.isolated if isolated else layer.metrics
        return math.nan if m is None else m.sqnr_db

    return sorted((lay for lay in result.layers if math.isfinite(key(lay))), key=key)[:n]
