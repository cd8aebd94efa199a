"""The provenance of an edited model B in the HTML report: which version it is, the original
model B, the model it was made from, the plan's edits and ops, the samples it calibrated on,
and the chain of versions (the dict `state.provenance.version_provenance` builds)."""

from __future__ import annotations

from html import escape
from typing import Any


def _code(v: Any) -> str:
    return f"<code>{escape(str(v))}</code>"


def provenance_html(prov: dict[str, Any] | None) -> str:
    if not prov:
        return ""
    rows = [
        ("version", f"{escape(str(prov.get('version')))} ({escape(str(prov.get('kind')))}, {escape(str(prov.get('route')))} route)"),
        ("original model B", _code(prov.get("original_b"))),
        ("made from", _code(prov.get("made_from")) + (f" ({escape(str(prov['made_from_version']))})" if prov.get("made_from_version") else "")),
        ("edits", "<br>".join(
            escape(e["edit"]) + (f" on ops {', '.join(str(i) for i in e['ops'])}" if e.get("ops") else "")
            + (f" selecting {escape(str(e['selector']))}" if e.get("selector") else "")
            + (f" ({escape(str(e['calibration']))})" if e.get("calibration") else "")
            for e in prov.get("edits") or []) or "none"),
        ("samples", escape(str((prov.get("samples") or {}).get("description") or "unknown"))
         + (" <b>(random: no inputs chosen)</b>" if (prov.get("samples") or {}).get("random") else "")),
        ("versions", " → ".join(escape(str(c["version"])) for c in prov.get("chain") or [])),
        ("file", _code(prov.get("path"))),
    ]  # fmt: skip
    notes = "".join(f"<li>{escape(str(n))}</li>" for n in prov.get("notes") or [])
    body = "".join(f'<tr><th>{k}</th><td data-key="provenance.{k.replace(" ", "_")}">{v}</td></tr>' for k, v in rows)
    return (f'<h3 id="provenance">Provenance of this model B</h3><table>{body}</table>'
            + (f"<ul class=\"muted\">{notes}</ul>" if notes else ""))  # fmt: skip
