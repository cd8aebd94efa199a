"""What the GUI's Keras / QAT tab shows, as text rows computed here (views never compute):
QAT ranges beside the TFLite scales, and each Keras layer's error against model B."""

from __future__ import annotations

from typing import Any

QAT_COLUMNS = ("Layer", "Range", "QAT min", "QAT max", "QAT scale", "QAT zp", "TFLite scale", "TFLite zp",
               "Rel. diff", "Findings")  # fmt: skip
LAYER_COLUMNS = ("Op", "Type", "Keras layer", "SQNR dB", "Isolated SQNR dB", "Max |err| (steps)", "")


def _g(v: Any, digits: int = 6) -> str:
    if v is None:
        return "—"
    if isinstance(v, list):
        return f"{len(v)} channels" if len(v) > 1 else _g(v[0], digits)
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def qat_row_tensors(info: dict[str, Any]) -> list[int | None]:
    """The TFLite tensor of each `qat_rows` row (None where no tensor pairs)."""
    out: list[int | None] = []
    for q in info.get("qat") or ():
        tfl = q.get("tflite") or {}
        if q.get("activation") is not None:
            out.append((tfl.get("activation") or {}).get("tensor"))
        if q.get("weights") is not None:
            out.append((tfl.get("weights") or {}).get("tensor"))
    return out


def qat_rows(info: dict[str, Any]) -> list[tuple[str, ...]]:
    """One row per QAT range (activation or weights) of `keras_info(...)["qat"]`."""
    rows: list[tuple[str, ...]] = []
    for q in info.get("qat") or ():
        tfl = q.get("tflite") or {}
        a = q.get("activation")
        findings = "; ".join(q.get("findings") or ())
        if a is not None:
            t = tfl.get("activation") or {}
            rows.append((q["layer"], a["kind"], _g(a["min"]), _g(a["max"]), _g(a["scale"], 8), str(a["zero_point"]),
                         _g(t.get("scale"), 8), _g(t.get("zero_point")), _g(t.get("relative_difference"), 2), findings))  # fmt: skip
            findings = ""
        w = q.get("weights")
        if w is not None:
            t = tfl.get("weights") or {}
            per = w["per_channel"]
            lo = min(w["min"]) if per else w["min"]
            hi = max(w["max"]) if per else w["max"]
            scale = f"{min(w['scale']):.4g}..{max(w['scale']):.4g}" if per else _g(w["scale"], 8)
            tscale = t.get("scale")
            tshow = f"{min(tscale):.4g}..{max(tscale):.4g}" if isinstance(tscale, list) and len(tscale) > 1 else _g(tscale, 8)
            rows.append((q["layer"], "kernel" + (f" ({len(w['scale'])} ch)" if per else ""), _g(lo), _g(hi), scale, "0",
                         tshow, "0" if tscale is not None else "—", _g(t.get("relative_difference"), 2), findings))  # fmt: skip
    return rows


def layer_rows(d: dict[str, Any]) -> tuple[list[tuple[str, ...]], int | None]:
    """Rows of `KerasComparison.to_json()`'s layers and the row of the first departure."""
    rows: list[tuple[str, ...]] = []
    mark: int | None = None
    first = (d.get("first_departure") or {}).get("op_index")
    for i, layer in enumerate(d["layers"]):
        iso = layer.get("isolated") or {}
        is_first = layer["op_index"] == first
        if is_first:
            mark = i
        rows.append((str(layer["op_index"]), layer["op_type"], layer.get("keras_layer") or "—",
                     _g(layer["metrics"]["sqnr_db"], 4) if layer["metrics"]["sqnr_db"] is not None else "∞",
                     (_g(iso["sqnr_db"], 4) if iso["sqnr_db"] is not None else "∞") if iso else "—",
                     _g(layer.get("max_error_steps"), 3),
                     "first departure from the QAT simulation" if is_first else ""))  # fmt: skip
    for u in d["unmatched"]:
        if u.get("side") == "keras":
            rows.append(("—", u["keras_class"], u["keras_layer"], "—", "—", "—", u["reason"]))
    return rows, mark
