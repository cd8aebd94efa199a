"""One point of Suggest's size/accuracy trade-off, the same type for both routes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.writing import json_float


@dataclass(frozen=True)
class TradeoffPoint(JsonRecord):
    """One evaluated model. `layers`: the ops given a treatment (quantizer route: the float
    model's op indices, as plans name them; surgical route: B's op indices). `output_sqnr_db`:
    where the suggestion measures (the model output, or the surgical objective); inf when exact.
    `edits`: the surgical plan behind the point ('keep_float op:3', ...), empty on the quantizer route."""

    label: str
    layers: tuple[int, ...]
    size_bytes: int
    output_sqnr_db: float
    edits: tuple[str, ...] = json_field(default=(), skip=True)  # written by `surgical_json` only

    def surgical_json(self) -> dict[str, Any]:
        """The keys the surgical route's JSON always had (plus label and layers)."""
        s = self.output_sqnr_db
        return {"edits": list(self.edits), "size_bytes": self.size_bytes,
                "objective_sqnr_db": json_float(s), "label": self.label, "layers": list(self.layers)}  # fmt: skip
