"""The diagnosis of one layer (`diagnosis.py` computes it): a cause, one line of evidence with the
figures, and the surgical edit that addresses it. JSON: {"cause", "evidence", "fix": {"edit",
"ops"} | null, "blame": {"share", "gain_db"} | null} (issue 21; blame: issue 33).

`Blame` is what removing the op's own quantization error does to the model output, measured by
intervention (`requantize.blame`); `RootCause` is one row of `compare --json`'s "root_causes".
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.core.codec.json_record import JsonRecord, decode, encode, json_field


@dataclass(frozen=True)
class Fix(JsonRecord):
    edit: str  # one of EDITS
    ops: tuple[int, ...]  # B op indices


@dataclass(frozen=True)
class Blame(JsonRecord):
    # 1 - MSE_out(after) / MSE_out(before): the share of the output error energy removed
    share: float = json_field(none_as=math.inf, absent=math.inf)
    gain_db: float = json_field(none_as=math.inf, absent=math.inf)  # output SQNR after - before
    # what was done to measure it ("keep float op 4", "re-calibrate op 1"); not written
    intervention: str = json_field(default="", skip=True)


@dataclass(frozen=True)
class RootCause(JsonRecord):
    op_index: int  # B's op (-1: the model input of an integer-input model has no op)
    op_type: str = json_field(absent="")
    cause: str = json_field()
    share: float = json_field(none_as=math.inf, absent=math.inf)
    gain_db: float = json_field(none_as=math.inf, absent=math.inf)
    fix: Fix | None = json_field(absent=None)
    fix_gain_db: float | None = json_field(absent=None)  # the measured held-out gain of applying `fix`
    intervention: str = ""
    note: str = ""  # e.g. the input-range fix changes the model's interface
    # held-out top-1 accuracy: float, B, B with the fix (written as three keys, below)
    accuracy: tuple[float, float, float] | None = json_field(default=None, skip=True)
    # the fix changes the model's interface (`input_range`): new input params
    interface_change: dict[str, Any] | None = json_field(default=None, omit_none=True)

    JSON_KEYS = ("op_index", "cause", "share", "gain_db", "fix", "fix_gain_db", "op_type", "intervention", "note",
                 "interface_change")  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        """The fields (`codec.json_record`), "accuracy" spread over three keys before "interface_change"."""
        d = encode(self)
        if self.accuracy is not None:
            d.update(zip(_ACCURACY, self.accuracy, strict=True))
            if self.interface_change is not None:
                d["interface_change"] = d.pop("interface_change")
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RootCause:
        acc = tuple(float(d[k]) for k in _ACCURACY) if "accuracy_after" in d else None
        return decode(cls, d, accuracy=acc)


_ACCURACY = ("accuracy_float", "accuracy_before", "accuracy_after")


@dataclass(frozen=True)
class Diagnosis(JsonRecord):
    cause: str  # one of CAUSES
    evidence: str = json_field(absent="")  # one line with the figures
    fix: Fix | None = None
    # inherited: the upstream B op the error comes from; not written: read from the evidence
    source_op: int | None = json_field(default=None, skip=True)
    blame: Blame | None = None  # measured by intervention (`requantize.blame`), where measured

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Diagnosis:
        """The fields (`codec.json_record`); the upstream op of a layer pointing at the cause (`inherited`,
        `mixed_ranges`, `channel_imbalance`) is read from its evidence, the JSON keeping the contract's keys."""
        pointing = ("inherited", "mixed_ranges", "channel_imbalance")
        m = re.search(r"comes from op (\d+)", d.get("evidence", "")) if d["cause"] in pointing else None
        return decode(cls, d, source_op=int(m.group(1)) if m else None)
