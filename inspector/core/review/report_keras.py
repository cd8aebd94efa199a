"""The report of a Keras / SavedModel model A: named and sourced by the model the user gave (the
`.h5` file or the SavedModel folder), not by its float twin in the cache, with the QAT section
`info MODEL` prints (every QAT variable and what it becomes, ranges → scales, findings).

`keras_report(report, ...)` amends a `build_report` dict made from the float twin; the HTML
section is `qat_section_html(report)` (empty when the report has no Keras model).
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from inspector.core.keras.qat_variables import VARIABLE_COLUMNS, variable_table_rows
from inspector.core.keras.rows import QAT_COLUMNS, qat_rows

QAT_SECTION = ("keras-qat", "Keras QAT ranges → scales")


def keras_report(report: dict[str, Any], model_path: str, twin_path: str, keras: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
    """Name model A by the Keras model (`model_path`), keep the twin's path beside it, and add the
    Keras facts (`keras`: the comparison's "float" block) and `keras_info` (`info`)."""
    card = report["models"]["float"]
    card["twin_path"] = twin_path
    card["path"] = str(model_path)
    card["file"] = Path(str(model_path).rstrip("/")).name
    card["keras"] = dict(keras)
    report["keras_info"] = info
    return report


def _table(headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def twin_note_html(card: dict[str, Any]) -> str:
    """The models section's line saying where model A's structure came from."""
    if not card.get("twin_path"):
        return ""
    k = card.get("keras") or {}
    qat = ", quantization-aware (QAT)" if k.get("qat") else ""
    return (f'<p class="muted">float model: the Keras model <code>{escape(card["path"])}</code> ({escape(str(k.get("keras_format", "")))}'
            f"{qat}); the structure, weights and op math shown come from its float twin "
            f"<code>{escape(card['twin_path'])}</code> (made by TF's converter, cached)</p>")


def qat_section_html(report: dict[str, Any]) -> str:
    info = report.get("keras_info")
    if not info:
        return ""
    if not info.get("qat"):
        return "<p class=\"muted\">The Keras model is not quantization-aware: it has no QAT ranges.</p>"
    p = info.get("params") or {}
    parts = [f"<p>QAT ranges of <code>{escape(str(info['path']))}</code> beside <code>{escape(str(info.get('tflite')))}</code>. "
             f"model.summary(): {p.get('total', 0):,} params, {p.get('trainable', 0):,} trainable, "
             f"{p.get('non_trainable', 0):,} non-trainable. Activations S = (max − min)/255, Z = round(−128 − min/S); "
             "weights S = max(|min|, |max|)/127, Z = 0.</p>"]
    parts.append(_table(QAT_COLUMNS, qat_rows(info)))
    findings = [f"{q['layer']}: {f}" for q in info["qat"] for f in q.get("findings") or ()]
    if findings:
        parts.append("<h3>QAT findings</h3><ul>" + "".join(f'<li class="sev-warning">{escape(f)}</li>' for f in findings) + "</ul>")
    else:
        parts.append("<p>No QAT finding: B uses every QAT range, and none wastes the int8 grid.</p>")
    parts.append("<h3>QAT variables and what each becomes</h3>")
    parts.append(_table(VARIABLE_COLUMNS, variable_table_rows(info)))
    return "".join(parts)
