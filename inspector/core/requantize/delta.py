"""What changed between two versions of model B, each compared with the same float model A.

Layers are matched by their float tensor (model A does not change, so it is the stable key);
a layer present in only one comparison keeps None on the other side. Output SQNR is the worst
model output, as `suggest` uses it. Infinite SQNR (equal tensors, e.g. a layer kept float with
exact inputs) stays infinite; its delta is infinite too unless both sides are.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.compare.result import ComparisonResult
from inspector.core.writing import json_float


def output_sqnr_db(result: ComparisonResult | None) -> float | None:
    """Worst model-output SQNR (dB) of a comparison; inf when every output is exact."""
    if result is None or not result.outputs:
        return None
    return min(float(o.metrics.sqnr_db) for o in result.outputs)


def db_delta(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or (math.isnan(before) or math.isnan(after)):
        return None
    if math.isinf(before) and math.isinf(after):
        return 0.0 if before == after else after - before
    return after - before


@dataclass(frozen=True)
class LayerDelta(JsonRecord):
    float_tensor: int
    float_op_index: int | None
    op_type: str  # in the 'after' model ('before' when the layer is gone)
    tensor_name: str
    before_db: float | None = json_field(key="before_sqnr_db")
    after_db: float | None = json_field(key="after_sqnr_db")
    before_dtype: str = ""
    after_dtype: str = ""
    op_index: int | None = None  # the layer identifier: op of the 'after' B (the 'before' B's when gone)
    edit: str = ""  # the surgical edit applied to this layer's op between the two versions ("" : none)

    JSON_EXTRA = {"delta_db": lambda r: r.delta_db}
    JSON_KEYS = ("op_index", "float_tensor", "float_op_index", "op_type", "tensor_name", "before_sqnr_db", "after_sqnr_db",
                 "delta_db", "before_dtype", "after_dtype", "edit")  # fmt: skip

    @property
    def delta_db(self) -> float | None:
        return db_delta(self.before_db, self.after_db)



@dataclass(frozen=True)
class VersionDelta:
    before_name: str
    after_name: str
    rows: tuple[LayerDelta, ...]
    output_before_db: float | None
    output_after_db: float | None
    size_before: int
    size_after: int

    @property
    def output_delta_db(self) -> float | None:
        return db_delta(self.output_before_db, self.output_after_db)

    @property
    def size_ratio(self) -> float | None:
        return self.size_after / self.size_before if self.size_before else None

    def edited(self) -> list[LayerDelta]:
        """Rows whose op the change between the versions edited (surgical edits), in model order."""
        return [r for r in self.rows if r.edit]

    def changed(self, min_db: float = 0.05) -> list[LayerDelta]:
        """Rows whose SQNR moved by at least `min_db` (either way), largest change first."""
        rows = [r for r in self.rows if r.delta_db is not None and abs(r.delta_db) >= min_db]
        return sorted(rows, key=lambda r: -abs(r.delta_db or 0.0))  # every row kept has a delta

    def to_json(self) -> dict[str, Any]:
        """Hand-written: the output SQNRs and sizes are grouped under their own keys, not fields."""
        j = json_float

        return {
            "before": self.before_name,
            "after": self.after_name,
            "output_sqnr_db": {"before": j(self.output_before_db), "after": j(self.output_after_db), "delta": j(self.output_delta_db)},
            "size_bytes": {"before": self.size_before, "after": self.size_after},
            "layers": [r.to_json() for r in self.rows],
        }


def version_delta(
    before: ComparisonResult,
    after: ComparisonResult,
    size_before: int,
    size_after: int,
    names: tuple[str, str] = ("before", "after"),
    edits: dict[int, str] | None = None,
) -> VersionDelta:
    """Per-layer SQNR before/after (accumulated error), model-output SQNR and size of two versions.

    `edits` maps op indices of the 'before' B to the surgical edit applied to them (the
    `SurgicalResult`'s edited ops); the rows of those layers carry it in `edit`. Layers are
    matched through model A's tensor, so the mark survives the op renumbering of an edit.
    """
    old = {layer.float_tensor: layer for layer in before.layers}
    marks = {layer.float_tensor: edits[layer.op_index] for layer in before.layers if edits and layer.op_index in edits}
    rows: list[LayerDelta] = []
    seen: set[int] = set()
    for layer in after.layers:
        b = old.get(layer.float_tensor)
        seen.add(layer.float_tensor)
        rows.append(LayerDelta(
            layer.float_tensor, layer.float_op_index, layer.op_type, layer.tensor_name,
            None if b is None else float(b.metrics.sqnr_db), float(layer.metrics.sqnr_db),
            "" if b is None else b.dtype, layer.dtype, layer.op_index, marks.get(layer.float_tensor, ""),
        ))  # fmt: skip
    for layer in before.layers:
        if layer.float_tensor not in seen:
            rows.append(LayerDelta(
                layer.float_tensor, layer.float_op_index, layer.op_type, layer.tensor_name,
                float(layer.metrics.sqnr_db), None, layer.dtype, "", layer.op_index, marks.get(layer.float_tensor, ""),
            ))  # fmt: skip
    return VersionDelta(
        names[0], names[1], tuple(rows),
        output_sqnr_db(before), output_sqnr_db(after), int(size_before), int(size_after),
    )  # fmt: skip
