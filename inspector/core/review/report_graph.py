"""The model graph the HTML report embeds: B's compared subgraph drawn by `core.graph`, coloured
by each layer's accumulated SQNR, with the audit's ops badged, each op linking to its section of
the report (op math, else its worst-layers row, else its causes row; ops with none carry only
their tooltip)."""

from __future__ import annotations

from typing import Any

from inspector.core.compare.result import ComparisonResult
from inspector.core.graph.drawing import graph_svg
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature


def report_graph_svg(report: dict[str, Any], comparison: ComparisonResult | None = None, metric: str = "sqnr") -> str:
    """The SVG of the audited model's reviewed subgraph (the comparison's signature)."""
    model = select_signature(load_model(report["audited_model"]), report.get("signature"))
    sub = report.get("subgraph") or 0
    audit_ops = {f["op_index"] for f in (report.get("audit") or {}).get("findings", [])
                 if f.get("op_index") is not None and (f.get("subgraph") or 0) == sub}  # fmt: skip
    anchors: dict[int, str] = {}
    for r in report.get("causes") or []:
        anchors[r["op_index"]] = f"#cause-op-{r['op_index']}"
    for lay in report.get("worst_layers") or []:
        anchors[lay["op_index"]] = f"#worst-op-{lay['op_index']}"
    for key in report.get("op_math") or {}:
        anchors[int(key)] = f"#opmath-{key}"
    return graph_svg(model, comparison, metric, audit_ops=audit_ops, link=anchors.get)
