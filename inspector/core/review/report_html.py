"""One self-contained HTML file from a `build_report` dict: inline CSS and SVG, no scripts,
no external references, so it opens anywhere without network and can be attached to a review.

Sections (element ids): models, layer-error, graph (the model graph, when given), task, worst-layers, audit, op-math. Every number shown
in a table cell carries its exact JSON value in a `data-value` attribute.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from html import escape
from typing import Any

from inspector.core.review.report_keras import QAT_SECTION, qat_section_html, twin_note_html
from inspector.core.review.report_provenance import provenance_html
from inspector.core.review.svg_plot import PALETTE, Series, line_plot, step_histogram
from inspector.core.stats.metric_table import metric_specs, spec
from inspector.core.stats.sqnr_scale import (
    EXACT_LINE_LABEL,
    EXACT_TICK,
    NEAR_EXACT_DB,
    NEAR_EXACT_LABEL,
    exact_axis_ticks,
    exact_line,
)
from inspector.core.text.numbers import percent

SECTIONS = (("models", "Models"), ("layer-error", "Layer error"), ("task", "Task metrics"), ("worst-layers", "Worst layers"),
            ("audit", "Audit findings"), ("op-math", "Op math of the worst layers"))  # fmt: skip

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px auto;max-width:1200px;color:#222;padding:0 16px}
h1{font-size:22px;margin-bottom:4px} h2{font-size:18px;border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
h3{font-size:15px;margin:18px 0 6px} nav a{margin-right:14px} .muted{color:#666}
.headline{border-left:4px solid #c0392b;background:#fdf2f0;padding:6px 12px;margin:10px 0}
table{border-collapse:collapse;margin:8px 0;font-size:13px} th,td{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4} td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap} code{font-size:12px}
th.num{white-space:nowrap} .banner{padding:6px 10px;border-radius:4px;margin:8px 0}
.sev-error{background:#fde2e1} .sev-warning{background:#fff4d6} .sev-info{background:#eef4fb}
.bar{display:inline-block;height:10px;background:#d9534f;vertical-align:middle} .bar.neg{background:#5cb85c}
.badge{display:inline-block;padding:1px 8px;border-radius:9px;margin-right:6px;font-size:12px}
.cards{display:flex;flex-wrap:wrap;gap:16px} .card{border:1px solid #ddd;border-radius:6px;padding:8px 12px}
ul.expl li{margin:3px 0} svg{background:#fff} td code{word-break:break-all}
.graph-scroll{max-height:900px;overflow:auto;border:1px solid #ddd}
"""


def _num(v: Any, key: str = "", digits: int = 4, percent: bool = False) -> str:
    """A numeric table cell with the exact value in data-value (`percent`: a share shown in %)."""
    if v is None:
        return f'<td class="num" data-key="{escape(key)}" data-value="null">–</td>'
    if isinstance(v, float) and not math.isfinite(v):
        return f'<td class="num" data-key="{escape(key)}" data-value="{v}">{v}</td>'
    if percent:
        shown = f"{100 * v:.{digits - 1}g} %"
    else:
        shown = f"{v:.{digits}g}" if isinstance(v, float) else str(v)
    return f'<td class="num" data-key="{escape(key)}" data-value="{json.dumps(v)}">{shown}</td>'


def _txt(v: object) -> str:
    return f"<td>{escape('' if v is None else str(v))}</td>"


def _kv(v: object) -> str:
    return escape(json.dumps(v) if isinstance(v, dict | list) else "" if v is None else str(v))


# ------------------------------------------------------------------ sections
def _models(report: dict[str, Any]) -> str:
    cards = [(k, report["models"].get(k)) for k in ("float", "quant")]
    cards = [(k, c) for k, c in cards if c is not None]
    rows = [("file", "file"), ("size (bytes)", "size_bytes"), ("subgraphs", "subgraphs"), ("ops", "ops"),
            ("tensors", "tensors"), ("signatures", "signatures")]  # fmt: skip
    head = "".join(f"<th>{'float model' if k == 'float' else 'quantized model'}</th>" for k, _ in cards)
    body = []
    for label, key in rows:
        cells = "".join(_num(c[key], f"{k}.{key}") if isinstance(c[key], int) else _txt(", ".join(c[key]) if isinstance(c[key], list) else c[key])
                        for k, c in cards)  # fmt: skip
        body.append(f"<tr><th>{label}</th>{cells}</tr>")
    for label, key in (("kernel paths", "kernel_paths"), ("op types", "op_types"), ("constant bytes by dtype", "constant_bytes")):
        cells = "".join("<td>" + "<br>".join(f"{escape(str(n))}: {v:,}" for n, v in c[key].items()) + "</td>" for _, c in cards)
        body.append(f"<tr><th>{label}</th>{cells}</tr>")
    for label, key in (("inputs", "inputs"), ("outputs", "outputs")):
        cells = "".join("<td>" + "<br>".join(
            f"<code>{escape(t['name'])}</code> {escape(t['dtype'])}{t['shape']}"
            + (f" S={t['scale']:.4g} Z={t['zero_point']}" if t["scale"] is not None else "") for t in c[key]) + "</td>"
            for _, c in cards)  # fmt: skip
        body.append(f"<tr><th>{label}</th>{cells}</tr>")
    paths = "".join(f'<p class="muted">{k}: <code>{escape(c["path"])}</code></p>' for k, c in cards)
    twin = twin_note_html(report["models"].get("float") or {})
    return f"<table><tr><th></th>{head}</tr>{''.join(body)}</table>{paths}{twin}{provenance_html(report.get('provenance'))}"


def _layer_error(report: dict[str, Any]) -> str:
    comp = report.get("comparison")
    if report.get("comparison_error"):
        return (f'<p class="sev-error">The comparison could not run: {escape(report["comparison_error"])}</p>'
                '<p class="muted">See the audit findings below for rule violations that make the runtime refuse a model.</p>')  # fmt: skip
    if not comp or not comp.get("layers"):
        return '<p class="muted">No comparison run (give both models and samples to measure layer error).</p>'
    # x = op index in the quantized model (execution order). As in the GUI plot
    # (`core.stats.sqnr_scale`): integer shape ops (SHAPE, STRIDED_SLICE, PACK: equal by
    # construction) are left out; equal tensors (∞) and SQNRs >= NEAR_EXACT_DB (equal up to
    # float rounding) sit on one line 10 dB above the best other SQNR, whose tick reads "∞ / ≥ 100".
    layers = [lay for lay in comp["layers"] if not _shape_only(lay)]
    raw = {k: [_sqnr(lay, k) for lay in layers] for k in ("metrics", "isolated")}
    top = exact_line(v for vs in raw.values() for v in vs if v is not None)
    capped = sum(1 for vs in raw.values() for v in vs if v is not None and v >= NEAR_EXACT_DB)
    xs = [lay["op_index"] for lay in layers]
    acc, iso = ([None if v is None else top if v >= NEAR_EXACT_DB else v for v in raw[k]] for k in ("metrics", "isolated"))
    series = [Series("accumulated SQNR", xs, acc, PALETTE[0])]
    drew_iso = any(v is not None for v in iso)
    if drew_iso:
        series.append(Series("isolated SQNR", xs, iso, PALETTE[1], dashed=True))
    worst = {lay["op_index"] for lay in report.get("worst_layers", [])}
    hl = [x for x in xs if x in worst]
    svg = line_plot(series, title="SQNR per layer (dB, higher is better)", x_label="op index (execution order)",
                    y_label="SQNR (dB)", highlight=hl, connect_gaps=True, integer_x=True,
                    y_axis=(lambda lo, _hi: exact_axis_ticks(lo, top)) if capped else None,
                    y_line=(top, EXACT_LINE_LABEL) if capped else None)  # fmt: skip
    meta = (f'<p class="muted">{comp.get("samples")} samples, runtime {escape(str(comp.get("runtime")))}'
            f'{" — " + escape(str(comp["kernels"])) if comp.get("kernels") else ""}{_subgraph_note(report)}. '
            "Integer shape ops (equal by construction) are left out; red rings mark the worst layers"
            + ("; isolated SQNR is each layer's own error, fed the quantized model's inputs" if drew_iso else "") + "."
            + (f" {capped} value(s) of ∞ (equal tensors) or {NEAR_EXACT_LABEL} (equal up to float rounding) are drawn "
               f"on the line marked “{EXACT_TICK}”, not to scale." if capped else "") + "</p>")  # fmt: skip
    banner = _random_banner(comp) + _pair_banner(comp) + _inside_banner(report)
    outs = comp.get("outputs") or []
    keys = ("sqnr_db", "mse", "max_abs", "cosine")
    rows = "".join(f"<tr>{_txt(o['name'])}" + "".join(_metric((o.get("metrics") or {}).get(k), k, f"output.{k}")
                                                      for k in keys) + "</tr>" for o in outs)
    heads = "".join(f"<th>{escape(spec(k).header)}</th>" for k in keys)
    out_tab = f"<h3>Model outputs</h3><table><tr><th>output</th>{heads}</tr>{rows}</table>" if outs else ""
    ref = f'<p>Reference: {escape(comp["reference"])}.</p>' if comp.get("reference") else ""
    if comp.get("state"):  # a stateful model (LSTM state, resource variables)
        ref += f'<p>{escape(comp["state"][:1].upper() + comp["state"][1:])}.</p>'
    return f'{banner}{ref}<div class="plot">{svg}</div>{meta}{out_tab}'


def _shape_only(lay: dict[str, Any]) -> bool:
    """An unquantized integer output (shape arithmetic), as `viewdata.layer_series.is_shape_only`."""
    return lay.get("dtype") in ("int32", "int64", "bool", "uint32", "uint64") and not lay.get("scale")


def _sqnr(lay: dict[str, Any], key: str) -> float | None:
    """The layer's SQNR as drawn: JSON writes ∞ as null, so zero error (mse 0) is ∞; None when
    not measured (or −∞: the float reference is all zeros)."""
    m = lay.get(key)
    if not m:
        return None
    if m.get("sqnr_db") is None:
        return math.inf if m.get("mse") == 0 else None
    db: float = m["sqnr_db"]
    return db


def _inside_banner(report: dict[str, Any]) -> str:
    """Where a channel or slice reads far below its tensor (issue 25: a whole-tensor SQNR hides it)."""
    lines = report.get("inside") or []
    if not lines:
        return ""
    items = "".join(f"<li>{escape(x.strip())}</li>" for x in lines if not x.startswith("inside the tensors"))
    return ('<div class="banner sev-warning" id="inside"><b>Inside the tensors</b> — a channel or slice reads '
            f"20 dB or more below its tensor's SQNR, which hides it:<ul>{items}</ul></div>")


def _random_banner(comp: dict[str, Any]) -> str:
    if not comp.get("samples_are_random"):
        return ""
    return ('<p class="banner sev-warning" id="random-inputs">These results come from random inputs: task metrics '
            "(accuracy, agreement) and clipping say little about real data. Give real samples with "
            '<code style="white-space:nowrap">--inputs</code>.</p>')  # fmt: skip


def _pair_banner(comp: dict[str, Any]) -> str:
    """The pair check: swapped models, weights that disagree, poor pairing coverage."""
    pc = comp.get("pair_check")
    if not pc:
        return ""
    figures = ""
    if pc.get("median_step_error") is not None:
        unit = pc.get("error_unit", "quantization steps")
        figures = (f"paired weights differ from the float ones by a median {pc['median_step_error']:.2f} and at most "
                   f"{pc['max_step_error']:.2f} {unit} ({100 * pc['disagree_share']:.1f}% beyond "
                   f"{pc.get('disagree_steps', 2):g}, {pc['weights_compared']} weight tensors); ")  # fmt: skip
    figures += f"{100 * pc['op_coverage']:.0f}% of the quantized model's ops paired"
    swapped = comp.get("swapped") or pc.get("swapped")
    notes = [r for r in pc.get("reasons", []) if "swapped" not in r] + ([pc["note"]] if pc.get("note") else [])
    if swapped:
        notes.insert(0, "the models were given the wrong way round (the quantized one first) and were swapped back")
    if not pc.get("related", True):
        cls, head = "sev-error", "Not a float/quantized twin pair"
    elif notes:
        cls, head = "sev-warning", "Pair check"
    else:
        cls, head = "muted", "Pair check: twins"
    text = "; ".join(notes)
    return (f'<p class="banner {cls}" id="pair-check"><b>{head}</b>{": " + escape(text) if text else ""} — '
            f"{escape(figures)}.</p>")

def worst_columns() -> tuple[str, ...]:
    """The metric columns of the worst-layers table, headers with units (`MetricSpec.header`;
    float units: the tensor's own values), in the metric table's order."""
    return tuple(m.key for m in metric_specs() if m.report)


def _metric(v: Any, key: str, data_key: str | None = None) -> str:
    """A metric's table cell, formatted as the metric table says (the exact value in data-value)."""
    m = spec(key)
    if v is None or not isinstance(v, float) or not math.isfinite(v):
        return _num(v, data_key or key)
    return f'<td class="num" data-key="{escape(data_key or key)}" data-value="{json.dumps(v)}">{m.number(v)}</td>'


def _float_op(lay: dict[str, Any]) -> str:
    """A's op beside B's where the numbers differ (B's op index is the layer identifier)."""
    f = lay.get("float_op_index")
    return "" if f is None or f == lay["op_index"] else f' <span class="muted">(A: op {f})</span>'


def _worst(report: dict[str, Any]) -> str:
    worst = report.get("worst_layers") or []
    if not worst:
        return '<p class="muted">No comparison run, so no layer ranking.</p>'
    with_iso = any(lay.get("isolated") for lay in worst)  # the column only when the own error ran (not --no-isolated)
    cols = worst_columns()
    head = "".join(f'<th data-key="{k}">{escape(spec(k).header)}</th>' for k in cols)
    head += "<th>isolated SQNR (dB)</th>" if with_iso else ""
    rows = []
    for lay in worst:
        m = lay.get("metrics") or {}
        iso = (lay.get("isolated") or {}).get("sqnr_db") if lay.get("isolated") else None
        rows.append(f'<tr id="worst-op-{lay["op_index"]}">' + _num(lay["op_index"], "op_index") + _txt(lay["op_type"])
                    + f"<td><code>{escape(str(lay['tensor_name']))}</code>{_float_op(lay)}</td>"
                    + "".join(_metric(m.get(k), k) for k in cols)
                    + (_num(iso, "isolated.sqnr_db") if with_iso else "") + "</tr>")  # fmt: skip
    table = (f"<table><tr><th>op</th><th>type</th><th>tensor</th>{head}</tr>{''.join(rows)}</table>") + _causes(report)
    hists = []
    for lay in worst:
        h = lay.get("weights")
        if not h:
            continue
        markers = [(h["clip_lo"], "min"), (h["clip_hi"], "max")] if h.get("clip_lo") is not None else []
        series = [(n, c, col) for n, c, col in (("float", h.get("float_counts"), PALETTE[0]),
                                                ("dequantized", h.get("quant_counts"), PALETTE[1])) if c is not None]  # fmt: skip
        svg = step_histogram(h["edges"], series, title=f"weights of op {lay['op_index']} {lay['op_type']}",
                             x_label=f"{h['tensor_name']} (float value)", markers=markers)  # fmt: skip
        sq = "–" if h.get("sqnr_db") is None else f"{h['sqnr_db']:.2f} dB"
        hists.append(f'<div class="card"><b>op {lay["op_index"]} {escape(lay["op_type"])}</b> — weight SQNR {sq}'
                     f"{' (per-channel)' if h.get('per_channel') else ''}<br>{svg}</div>")  # fmt: skip
    return table + ("<h3>Weight histograms (float vs dequantized; dashed: representable range)</h3>"
                    f'<div class="cards">{"".join(hists)}</div>' if hists else "")  # fmt: skip


def _causes(report: dict[str, Any]) -> str:
    """The diagnosed causes (layers with an error of their own), with the edit for each."""
    rows = report.get("causes")
    if rows is None:
        return ""
    if not rows:
        return ('<h3 id="causes">Causes</h3>' + _accumulated_note(report)
                + '<p class="muted">No layer has a cause of its own (clipping, resolution, weights, bias, kernel).</p>')
    body = []
    for r in rows:
        fix = r.get("fix")
        fix_text = "–" if not fix else f"{fix['edit']} on op {', '.join(map(str, fix['ops']))}"
        inh = r.get("inheriting") or []
        down = f"{len(inh)} layer(s) downstream: op {', '.join(map(str, inh[:8]))}{' …' if len(inh) > 8 else ''}" if inh else "–"
        body.append(f'<tr id="cause-op-{r["op_index"]}">' + _num(r["op_index"], "op_index") + _txt(r["op_type"])
                    + f'<td><b>{escape(r["cause"])}</b></td>' + _txt(fix_text) + _txt(r["evidence"]) + _txt(down) + "</tr>")  # fmt: skip
    return ('<h3 id="causes">Causes</h3>' + _accumulated_note(report) + '<table><tr><th>op</th><th>type</th><th>cause</th>'
            f"<th>fix</th><th>evidence</th><th>inherited by</th></tr>{''.join(body)}</table>")  # fmt: skip


def _accumulated_note(report: dict[str, Any]) -> str:
    """Without isolated errors every cause is judged from the accumulated error, which a layer
    also inherits from upstream: say so (the example twin's three FCs read 'weight_rounding')."""
    layers = (report.get("comparison") or {}).get("layers") or []
    if any(lay.get("isolated") for lay in layers):
        return ""
    return ('<p class="banner sev-warning" id="causes-accumulated">Judged from each layer\'s accumulated error: this '
            "report ran without the own (isolated) error (<code>--no-isolated</code>), so a layer downstream of a bad one can show a "
            "cause that belongs upstream, no layer is marked inherited, and bias shifts are not judged. Run without "
            "<code>--no-isolated</code> to separate each layer's own error.</p>")  # fmt: skip


def _task(report: dict[str, Any]) -> str:
    t = (report.get("comparison") or {}).get("task")
    if not t:
        return '<p class="muted">No per-sample outputs (no comparison run, or outputs too large to keep).</p>'
    if t.get("kind") in ("regression", "other"):
        return _task_regression(t)
    drop = t.get("accuracy_drop_pct")
    cards = [("task kind", t["kind"]), ("samples", t["num_samples"]), ("float accuracy", percent(t.get("float_accuracy"), 2, none='–', space=False)),
             ("quantized accuracy", percent(t.get("quant_accuracy"), 2, none='–', space=False)),
             ("accuracy drop", "–" if drop is None else f"{drop:.2f} points"),
             ("top-1 agreement", percent(t.get("top1_agreement"), 2, none='–', space=False) + _counted(t)),
             ("top-5 agreement", percent(t.get("top5_agreement"), 2, none='–', space=False) + _counted(t))]  # fmt: skip
    head = "".join(f'<div class="card" data-key="task.{escape(k)}"><span class="muted">{escape(k)}</span><br><b>{escape(str(v))}</b></div>'
                   for k, v in cards)  # fmt: skip
    note = ("" if t.get("float_accuracy") is not None else
            '<p class="muted">No labels: the float model\'s prediction is the reference (agreement, not accuracy).</p>')  # fmt: skip
    per_class = ""
    if t.get("per_class"):
        rows = "".join(
            f"<tr>{_txt(c.get('name') or c['label'])}{_num(c['count'], 'count')}{_num(c['float_accuracy'], 'float_accuracy', percent=True)}"
            f"{_num(c['quant_accuracy'], 'quant_accuracy', percent=True)}{_num(c['drop_pct'], 'drop_pct')}"
            f'<td><span class="bar{" neg" if c["drop_pct"] < 0 else ""}" style="width:{min(abs(c["drop_pct"]), 100) * 2:.0f}px"></span></td></tr>'
            for c in t["per_class"])  # fmt: skip
        per_class = ("<h3>Accuracy drop per class (percentage points)</h3><table><tr><th>class</th><th>samples</th>"
                     f"<th>float acc.</th><th>quant. acc.</th><th>drop</th><th></th></tr>{rows}</table>")  # fmt: skip
    worst = ""
    if t.get("worst_samples"):
        rows = "".join(
            f"<tr>{_num(w['index'], 'index')}{_txt(w['source'])}{_txt(w.get('label_name') or w['label'])}"
            f"{_txt(_pred(w, 'float'))}{_txt(_pred(w, 'quant'))}"
            f"{_num(w['output_sqnr_db'], 'output_sqnr_db')}{_txt('yes' if w.get('flipped') else '')}</tr>"
            for w in t["worst_samples"])  # fmt: skip
        worst = ("<h3>Worst samples (flipped predictions first, then lowest output SQNR)</h3><table><tr><th>#</th>"
                 "<th>source</th><th>label</th><th>float pred.</th><th>quant. pred.</th><th>output SQNR dB</th><th>flipped</th></tr>"
                 f"{rows}</table>")  # fmt: skip
    return f'<div class="cards">{head}</div>{_task_notes(t)}{_headline_output(t)}{note}{per_class}{worst}'


def _counted(t: dict[str, Any]) -> str:
    """' (5 of 8)' when ties of the float argmax left samples out of the agreement, so the share
    reads right beside an accuracy counted over all samples; '3 tied in B: lost' when the
    quantized argmax tied where the float one decided (counted as disagreements)."""
    n, k, lost = t.get("num_samples"), t.get("agreement_samples"), t.get("lost_decisions") or 0
    if t.get("top1_agreement") is None or k is None or not n:
        return ""
    parts = ([f"{k} of {n}"] if k < n else []) + ([f"{lost} tied in B: lost"] if lost else [])
    return f" ({'; '.join(parts)})" if parts else ""


def _pred(w: dict[str, Any], side: str) -> str:
    """A worst sample's predicted class, marked when the argmax was tied (not a prediction)."""
    v = w.get(f"{side}_pred_name") or w[f"{side}_pred"]
    return f"{v} (tied)" if w.get(f"{side}_tied") else str(v)


def _headline_output(t: dict[str, Any]) -> str:
    """With several outputs the cards are one output's figures: say which (every output follows)."""
    outs = t.get("outputs") or []
    if len(outs) < 2:
        return ""
    name = t.get("output") or outs[0].get("name")
    return (f'<p class="muted" data-key="task.output">The figures above are output <code>{escape(str(name))}</code>\'s '
            f"({t['kind']}), the first of {len(outs)} outputs; each output below.</p>" + _outputs_table(outs))  # fmt: skip


def _outputs_table(outs: list[dict[str, Any]]) -> str:
    """Every output's kind and headline figures (regression errors or agreement)."""
    agree = any(o.get("top1_agreement") is not None for o in outs)
    rows = "".join(
        f"<tr>{_txt(o['name'])}{_txt(o['kind'])}{_num(o.get('mae'), 'mae')}{_num(o.get('rmse'), 'rmse')}"
        f"{_num(o.get('max_error'), 'max_error')}{_num(o.get('float_range'), 'float_range')}"
        f"{_num(o.get('relative_rmse'), 'relative_rmse', percent=True)}"
        + (_num(o.get("top1_agreement"), "top1_agreement", percent=True) if agree else "") + "</tr>"
        for o in outs)  # fmt: skip
    return ("<h3>Per output</h3><table><tr><th>output</th><th>kind</th><th>MAE</th><th>RMSE</th><th>max error</th>"
            f"<th>float range</th><th>RMSE / range</th>{'<th>top-1 agreement</th>' if agree else ''}</tr>{rows}</table>")  # fmt: skip


def _task_notes(t: dict[str, Any]) -> str:
    """Why this kind, and what cannot be compared (constant outputs, argmax ties)."""
    out = f'<p class="muted" data-key="task.reason">{escape(t.get("reason") or "")}</p>' if t.get("reason") else ""
    if t.get("agreement_note") and t.get("top1_agreement") is None:
        out += f'<p class="banner sev-warning" data-key="task.agreement_note">Agreement not reported: {escape(t["agreement_note"])}</p>'
    for w in t.get("warnings") or ():
        out += f'<p class="banner sev-warning" data-key="task.warning">{escape(w)}</p>'
    return out


def _task_regression(t: dict[str, Any]) -> str:
    """Regression outputs: MAE, RMSE, max error (each also as a share of the float range) per output."""
    def rel(v: float | None) -> str:
        return "" if v is None else f" ({100 * v:.2f}% of range)"

    def g(v: float | None) -> str:
        return "–" if v is None else f"{v:.4g}"

    cards = [("task kind", t["kind"]), ("samples", t["num_samples"]), ("MAE", g(t.get("mae")) + rel(t.get("relative_mae"))),
             ("RMSE", g(t.get("rmse")) + rel(t.get("relative_rmse"))),
             ("max error", g(t.get("max_error")) + rel(t.get("relative_max_error"))), ("float range", g(t.get("float_range")))]  # fmt: skip
    head = "".join(f'<div class="card" data-key="task.{escape(k)}"><span class="muted">{escape(k)}</span><br><b>{escape(str(v))}</b></div>'
                   for k, v in cards)  # fmt: skip
    outputs = _headline_output(t) or (_outputs_table(t["outputs"]) if t.get("outputs") else "")
    worst = ""
    if t.get("worst_samples"):
        rows = "".join(
            f"<tr>{_num(w['index'], 'index')}{_txt(w['source'])}{_num(w.get('rmse'), 'rmse')}{_num(w.get('mae'), 'mae')}"
            f"{_num(w.get('max_abs'), 'max_abs')}{_num(w['output_sqnr_db'], 'output_sqnr_db')}</tr>"
            for w in t["worst_samples"])  # fmt: skip
        worst = ("<h3>Worst samples (largest RMSE first)</h3><table><tr><th>#</th><th>source</th><th>RMSE</th><th>MAE</th>"
                 f"<th>max error</th><th>output SQNR dB</th></tr>{rows}</table>")  # fmt: skip
    return f'<div class="cards">{head}</div>{_task_notes(t)}{outputs}{_task_slices(t)}{worst}'


def _task_slices(t: dict[str, Any]) -> str:
    """A concatenated regression output: MAE / RMSE / SQNR per input slice (issue 25)."""
    rows = ""
    for s in t.get("slices") or ():
        warn = ' class="sev-warning"' if s.get("collapsed") else ""
        label = f"{s['start']}:{s['stop']}"
        rows += (f"<tr{warn}>{_txt(label)}{_txt(s['source'])}{_num(s['mae'], 'slice.mae')}{_num(s['rmse'], 'slice.rmse')}"
                 f"{_num(s.get('sqnr_db'), 'slice.sqnr_db')}{_num(s.get('steps_used'), 'slice.steps_used')}"
                 f"{_txt('yes' if s.get('collapsed') else '')}</tr>")
    if not rows:
        return ""
    return ("<h3>Per input slice of the output</h3><table><tr><th>slice</th><th>from</th><th>MAE</th><th>RMSE</th>"
            f"<th>SQNR dB</th><th>steps used</th><th>collapsed in B</th></tr>{rows}</table>")


def _where(f: dict[str, Any], report: dict[str, Any]) -> str:
    """A finding's op type, with its subgraph when it is not the reviewed one (op indices differ)."""
    sub = f.get("subgraph") or 0
    other = f" (subgraph {sub})" if sub != (report.get("subgraph") or 0) else ""
    return (f["op_type"] or "") + other


def _audit(report: dict[str, Any]) -> str:
    a = report.get("audit") or {"counts": {}, "findings": []}
    c = a.get("counts", {})
    badges = "".join(f'<span class="badge sev-{s}" data-key="count.{s}" data-value="{c.get(s, 0)}">{c.get(s, 0)} {s}</span>'
                     for s in ("error", "warning", "info"))  # fmt: skip
    if not a["findings"]:
        return f"<p>{badges}</p><p>No findings.</p>"
    rows = "".join(
        f'<tr class="sev-{escape(f["severity"])}">{_txt(f["severity"])}{_txt(f["rule"])}{_num(f["op_index"], "op_index")}'
        f'{_txt(_where(f, report))}<td><code>{escape(str(f["tensor_name"] or ""))}</code></td>{_txt(f["message"])}'
        f"<td><code>{_kv(f['observed'])}</code></td><td><code>{_kv(f['expected'])}</code></td></tr>"
        for f in a["findings"])  # fmt: skip
    return (f'<p>{badges} <span class="muted">audited: <code>{escape(str(report.get("audited_model")))}</code></span></p>'
            "<table><tr><th>severity</th><th>rule</th><th>op</th><th>type</th><th>tensor</th><th>finding</th>"
            f"<th>observed</th><th>expected</th></tr>{rows}</table>")  # fmt: skip


def _subgraph_note(report: dict[str, Any]) -> str:
    """' (signature 'k', subgraph n)' when the review is of a signature's subgraph."""
    key, sub = report.get("signature"), report.get("subgraph") or 0
    if key is None and not sub:
        return ""
    return f" (signature '{escape(str(key))}', subgraph {sub})" if key is not None else f" (subgraph {sub})"


def _op_math(report: dict[str, Any]) -> str:
    oms = report.get("op_math") or {}
    if not oms:
        return '<p class="muted">No worst layers to explain.</p>'
    parts = []
    for key, om in oms.items():
        expl = "".join(f"<li>{escape(line)}</li>" for line in om["explanation"])
        table = ""
        c = om.get("conv")
        if c:
            rows = [("S1 input scale", c["input_scale"]), ("Z1", c["input_zero_point"]), ("S3 output scale", c["output_scale"]),
                    ("Z3", c["output_zero_point"]), ("M min", min(c["multipliers"])), ("M max", max(c["multipliers"])),
                    ("M0 min", min(c["m0"])), ("M0 max", max(c["m0"])), ("shift min", min(c["shifts"])),
                    ("shift max", max(c["shifts"])), ("channels", len(c["weight_scales"]))]  # fmt: skip
            table = "<table>" + "".join(f"<tr><th>{n}</th>{_num(v, f'op{key}.{n}', 8)}</tr>" for n, v in rows) + "</table>"
        r = om.get("rescale")
        if r and r.get("multipliers"):
            table = ("<table><tr><th>multiplier</th><th>formula</th><th>real</th><th>M0</th><th>shift</th></tr>"
                     + "".join(f"<tr>{_txt(m['name'])}{_txt(m['formula'])}{_num(m['real'], 'real', 8)}{_num(m['m0'], 'm0')}"
                               f"{_num(m['shift'], 'shift')}</tr>" for m in r["multipliers"]) + "</table>")  # fmt: skip
        parts.append(f'<div id="opmath-{escape(key)}"><h3>op {escape(key)} {escape(om["op_type"])}{_subgraph_note(report)} — '
                     f'{escape(om["kernel_label"])}</h3><ul class="expl">{expl}</ul>{table}</div>')  # fmt: skip
    return "".join(parts)


def _graph(svg: str) -> str:
    return ('<p class="muted">The reviewed subgraph of the quantized model, top to bottom in execution order; each op '
            "is coloured by its accumulated SQNR (legend above the graph), hover for its tensor, value and cause, click "
            f'an op that has a section below to go there.</p><div class="graph-scroll">{svg}</div>')


def _headline(report: dict[str, Any]) -> str:
    """The root causes first (measured blame, `compare.diagnosis_text`), above everything else."""
    lines = report.get("headline") or []
    if not lines:
        return ""
    items = "".join(f"<li>{escape(x.strip())}</li>" for x in lines[1:])
    return (f'<div class="headline" id="root-causes"><p><b>{escape(lines[0])}</b></p>'
            + (f"<ul>{items}</ul>" if items else "") + "</div>")


def render_html(report: dict[str, Any], graph_svg: str | None = None) -> str:
    """The report as one self-contained HTML document; `graph_svg`: the model graph (section "graph")."""
    models = report.get("models", {})
    names = " vs ".join(escape(c["file"]) for c in (models.get("float"), models.get("quant")) if c)
    if report.get("provenance"):
        names += f" ({escape(str(report['provenance'].get('version')))})"
    sections: tuple[tuple[str, str], ...] = (
        SECTIONS if graph_svg is None else (*SECTIONS[:2], ("graph", "Model graph"), *SECTIONS[2:]))
    sections = sections + ((QAT_SECTION,) if report.get("keras_info") else ())  # a Keras model A: its QAT section
    nav = "".join(f'<a href="#{sid}">{title}</a>' for sid, title in sections)
    render: dict[str, Callable[[dict[str, Any]], str]] = {
        "models": _models, "layer-error": _layer_error, "task": _task, "worst-layers": _worst, "audit": _audit, "op-math": _op_math,
        "graph": lambda _r: _graph(graph_svg or ""),
    }
    render[QAT_SECTION[0]] = qat_section_html
    body = "".join(f'<section id="{sid}"><h2>{title}</h2>{render[sid](report)}</section>' for sid, title in sections)
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>Quantization report: {names}</title><style>{CSS}</style></head><body>"
        f"<h1>Quantization report</h1><p class=\"muted\">{names} — generated {escape(str(report.get('generated_at')))} "
        f"by tflite-inspector {escape(str(report.get('tool_version')))}</p>{_headline(report)}<nav>{nav}</nav>{body}</body></html>\n"
    )
