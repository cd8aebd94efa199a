"""QAT ranges by model B's tensor: what the tensor table's QAT columns and the op math's
"QAT range → scale" section show (views only draw these cells).

Built from the `"qat"` rows of `keras_info(MODEL, B)` (the JSON form: the GUI gets it from the
worker), which already hold each range's scale and zero point (`qat_math`) and B's tensor
parameters beside them: nothing is recomputed here, only indexed by B's tensor and formatted.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any

QAT_TENSOR_COLUMNS = ("QAT scale", "QAT zp", "Rel. diff", "QAT range", "QAT min", "QAT max", "QAT finding")
QAT_TENSOR_TIPS = {
    "QAT range": "The Keras QAT layer whose min/max variables this tensor's quantization comes from",
    "QAT min": "QAT variable min (per-channel kernels: smallest … largest over channels)",
    "QAT max": "QAT variable max (per-channel kernels: smallest … largest over channels)",
    "QAT scale": "What the QAT range becomes: activations (max − min)/255, weights max(|min|, |max|)/127",
    "QAT zp": "Activations: round(−128 − min/scale) (TF's nudging), clamped to [−128, 127]; weights: 0",
    "Rel. diff": "|B's scale − QAT scale| / QAT scale (largest over channels); beyond 1e-5 the converter did not use the QAT range",
    "QAT finding": "The converter did not use the QAT range, or the range wastes the int8 grid",
}
QAT_MATH_HEADERS = ["Role", "QAT range", "QAT min", "QAT max", "QAT scale", "B scale", "Rel. diff", "QAT Z", "B Z",
                    "Finding", "Tensor"]  # fmt: skip
QAT_MATH_TIPS = ["role in the op", "Keras layer and which of its variables", "QAT variable min", "QAT variable max",
                 "what the range becomes (the rules are in the caption)", "model B's scale (the .tflite)",
                 "|B − QAT| / QAT, largest over channels", "what the range becomes: the zero point", "model B's zero point",
                 "the converter did not use the QAT range, or the range wastes the int8 grid", "model B's tensor"]  # fmt: skip
QAT_MATH_TITLE = "QAT range → scale"
QAT_MATH_RULES = ("activations S = (max − min)/255, Z = round(−128 − min/S); "
                  "weights S = max(|min|, |max|)/127, Z = 0")  # fmt: skip


@dataclass(frozen=True)
class QatTensor:
    """One QAT range (a layer's activation range or its kernel range) paired with B's tensor."""

    tensor: int
    name: str  # B's tensor name
    layer: str
    kind: str  # input | post_activation | pre_activation | output | kernel
    min: float | tuple[float, ...]
    max: float | tuple[float, ...]
    scale: float | tuple[float, ...]
    zero_point: int
    b_scale: float | tuple[float, ...] | None
    b_zero_point: int | tuple[int, ...] | None
    relative_difference: float | None
    findings: tuple[str, ...]

    @property
    def is_weights(self) -> bool:
        return self.kind == "kernel"

    @property
    def per_channel(self) -> bool:
        return isinstance(self.scale, tuple) and len(self.scale) > 1

    @property
    def rule(self) -> str:
        if self.is_weights:
            return "max(|min|, |max|)/127" + (f" per channel ×{len(self.scale)}" if isinstance(self.scale, tuple) and self.per_channel else "")
        return "(max − min)/255, Z = round(−128 − min/S)"

    def cells(self) -> tuple[str, ...]:
        """The tensor table's QAT columns (QAT_TENSOR_COLUMNS)."""
        return (_g(self.scale, 8), str(self.zero_point), _g(self.relative_difference, 2), f"{self.layer} · {self.kind}",
                _g(self.min), _g(self.max), "; ".join(self.findings))  # fmt: skip

    def sort_key(self, column: int) -> tuple[int, Any]:
        values: tuple[Any, ...] = (_low(self.scale), self.zero_point, self.relative_difference, f"{self.layer} {self.kind}",
                                   _low(self.min), _low(self.max), "; ".join(self.findings))  # fmt: skip
        v = values[column]
        return (0, v) if v is not None else (1, 0)

    def math_row(self, role: str) -> list[str]:
        """A row of the op math's QAT section (QAT_MATH_HEADERS); `role` is the tensor's role in the op."""
        zp = "—" if self.b_zero_point is None else _zp(self.b_zero_point)
        per = f" ×{len(self.scale)}" if isinstance(self.scale, tuple) and self.per_channel else ""  # per_channel: a tuple
        return [role, f"{self.layer} · {self.kind}{per}", _g(self.min), _g(self.max), _g(self.scale, 8), _g(self.b_scale, 8),
                _g(self.relative_difference, 2), str(self.zero_point), zp, "; ".join(self.findings) or "—", self.name]  # fmt: skip


class QatColumns:
    """The tensor table's extra columns for model B: QAT ranges by B's tensor index."""

    headers = QAT_TENSOR_COLUMNS
    tips = QAT_TENSOR_TIPS

    def __init__(self, by_tensor: dict[int, QatTensor]) -> None:
        self.by_tensor = by_tensor

    def cells(self, tensor: int) -> tuple[str, ...] | None:
        q = self.by_tensor.get(tensor)
        return None if q is None else q.cells()

    def sort_key(self, tensor: int, column: int) -> tuple[int, Any]:
        q = self.by_tensor.get(tensor)
        return (2, 0) if q is None else q.sort_key(column)

    def flagged(self, tensor: int) -> bool:
        q = self.by_tensor.get(tensor)
        return q is not None and bool(q.findings)


def qat_by_tensor(info: dict[str, Any]) -> dict[int, QatTensor]:
    """B's tensor index -> its QAT range, from `keras_info(...)` paired with B (info["tflite"]).
    A tensor two ranges claim keeps the first (in layer order)."""
    out: dict[int, QatTensor] = {}
    for q in info.get("qat") or ():
        tfl = q.get("tflite") or {}
        for part, kind in ((q.get("activation"), None), (q.get("weights"), "kernel")):
            t = tfl.get("weights" if kind else "activation")
            if part is None or not t or t.get("tensor") is None or t["tensor"] in out:
                continue
            findings = part.get("findings")
            if findings is None:  # info from before findings were split by range: all of the layer's
                findings = q.get("findings") or []
            out[t["tensor"]] = QatTensor(
                tensor=t["tensor"], name=t["name"], layer=q["layer"], kind=kind or part["kind"],
                min=_tup(part["min"]), max=_tup(part["max"]), scale=_tup(part["scale"]), zero_point=int(part["zero_point"]),
                b_scale=_tup(t.get("scale")), b_zero_point=_tup(t.get("zero_point")),
                relative_difference=t.get("relative_difference"), findings=tuple(findings))  # fmt: skip
    return out


def qat_math_rows(by_tensor: dict[int, QatTensor], tensors: list[tuple[str, int]]) -> list[list[str]]:
    """The op math's QAT section: one row per (role, B tensor index) of the op that has a QAT range."""
    return [by_tensor[i].math_row(role) for role, i in tensors if i in by_tensor]


def qat_math_findings(by_tensor: dict[int, QatTensor], tensors: list[tuple[str, int]]) -> list[str]:
    """The findings of the op's QAT ranges, each once, named by role and range."""
    out: list[str] = []
    for role, i in tensors:
        q = by_tensor.get(i)
        if q is None:
            continue
        for f in q.findings:
            line = f"{role} ({q.layer} · {q.kind}): {f}"
            if line not in out:
                out.append(line)
    return out


def qat_math_section(by_tensor: dict[int, QatTensor], tensors: list[tuple[str, int]],
                     ) -> tuple[str, list[str], list[list[str]], list[str], str, str] | None:
    """(caption HTML, headers, rows, header tips, plain text, note HTML) of the op math's QAT
    section for the op's (role, B tensor) pairs, or None when none of them has a QAT range. The
    note (the findings, or that there are none) goes above the op's parameters, where there is room."""
    rows = qat_math_rows(by_tensor, tensors)
    if not rows:
        return None
    findings = qat_math_findings(by_tensor, tensors)
    caption = f"<b>{QAT_MATH_TITLE}</b> (Keras QAT variables beside B): {html.escape(QAT_MATH_RULES)}"
    if findings:
        note = ("<p style='background-color:#fff1e0; color:#5a3300; padding:6px'><b>QAT findings</b><br>"
                + "<br>".join("• " + html.escape(f) for f in findings) + "</p>")  # fmt: skip
    else:
        note = "<p><b>QAT ranges</b>: B uses each of this op's QAT ranges (within 1e-5 relative); none wastes the grid.</p>"
    rules = [f"{r[1]}: {by_tensor[i].rule}" for (_role, i), r in zip(((ro, i) for ro, i in tensors if i in by_tensor), rows, strict=True)]
    text = "\n".join([f"{QAT_MATH_TITLE} (Keras QAT variables beside model B; r = S(q − Z))", "\t".join(QAT_MATH_HEADERS),
                      *("\t".join(r) for r in rows), *(f"Rule {x}" for x in rules), *(f"Finding: {f}" for f in findings)]) + "\n"  # fmt: skip
    return caption, list(QAT_MATH_HEADERS), rows, list(QAT_MATH_TIPS), text, note


def _tup(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(v) if len(v) > 1 else v[0]
    return v


def _low(v: Any) -> float:
    low: float = min(v) if isinstance(v, tuple) else v
    return low


def _g(v: Any, digits: int = 6) -> str:
    if v is None:
        return "—"
    if isinstance(v, tuple):
        lo, hi = min(v), max(v)
        return _g(lo, digits) if lo == hi else f"{_g(lo, digits)} … {_g(hi, digits)}"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _zp(v: Any) -> str:
    if isinstance(v, tuple):
        lo, hi = min(v), max(v)
        return str(lo) if lo == hi else f"{lo} … {hi}"
    return str(v)
