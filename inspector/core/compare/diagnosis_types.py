"""The diagnosis of one layer (`diagnosis.py` computes it): a cause, one line of evidence with the
figures, and the surgical edit that addresses it. JSON: {"cause", "evidence", "fix": {"edit",
"ops"} | null, "blame": {"share", "gain_db"} | null} (issue 21; blame: issue 33).

`Blame` is what removing the op's own quantization error does to the model output, measured by
intervention (`requantize.blame`); `RootCause` is one row of `compare --json`'s "root_causes".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Fix:
    edit: str  # one of EDITS
    ops: tuple[int, ...]  # B op indices

    def to_json(self) -> dict:
        return {"edit": self.edit, "ops": list(self.ops)}


@dataclass(frozen=True)
class Blame:
    share: float  # 1 - MSE_out(after) / MSE_out(before): the share of the output error energy removed
    gain_db: float  # output SQNR after - before
    intervention: str = ""  # what was done to measure it ("keep float op 4", "re-calibrate op 1")

    def to_json(self) -> dict:
        return {"share": _finite(self.share), "gain_db": _finite(self.gain_db)}

    @classmethod
    def from_json(cls, d: dict | None) -> Blame | None:
        if d is None:
            return None
        return cls(_num(d.get("share")), _num(d.get("gain_db")), str(d.get("intervention", "")))


@dataclass(frozen=True)
class RootCause:
    op_index: int  # B's op (-1: the model input of an integer-input model has no op)
    op_type: str
    cause: str
    share: float
    gain_db: float
    fix: Fix | None
    fix_gain_db: float | None  # the measured held-out gain of applying `fix`
    intervention: str = ""
    note: str = ""  # e.g. the input-range fix changes the model's interface
    accuracy: tuple[float, float, float] | None = None  # held-out top-1 accuracy: float, B, B with the fix
    interface_change: dict | None = None  # the fix changes the model's interface (`input_range`): new input params

    def to_json(self) -> dict:
        acc: dict[str, object] = {} if self.accuracy is None else dict(zip(("accuracy_float", "accuracy_before", "accuracy_after"), self.accuracy, strict=True))
        if self.interface_change is not None:
            acc["interface_change"] = self.interface_change
        return {"op_index": self.op_index, "cause": self.cause, "share": _finite(self.share),
                "gain_db": _finite(self.gain_db), "fix": None if self.fix is None else self.fix.to_json(),
                "fix_gain_db": None if self.fix_gain_db is None else _finite(self.fix_gain_db),
                "op_type": self.op_type, "intervention": self.intervention, "note": self.note, **acc}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict) -> RootCause:
        f = d.get("fix")
        return cls(int(d["op_index"]), str(d.get("op_type", "")), str(d["cause"]), _num(d.get("share")),
                   _num(d.get("gain_db")), None if f is None else Fix(f["edit"], tuple(f["ops"])),
                   None if d.get("fix_gain_db") is None else float(d["fix_gain_db"]),
                   str(d.get("intervention", "")), str(d.get("note", "")),
                   (float(d["accuracy_float"]), float(d["accuracy_before"]), float(d["accuracy_after"])) if "accuracy_after" in d else None,
                   d.get("interface_change"))  # fmt: skip


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def _num(v) -> float:
    return math.inf if v is None else float(v)


@dataclass(frozen=True)
class Diagnosis:
    cause: str  # one of CAUSES
    evidence: str  # one line with the figures
    fix: Fix | None = None
    source_op: int | None = None  # inherited: the upstream B op the error comes from
    blame: Blame | None = None  # measured by intervention (`requantize.blame`), where measured

    def to_json(self) -> dict:
        return {"cause": self.cause, "evidence": self.evidence, "fix": None if self.fix is None else self.fix.to_json(),
                "blame": None if self.blame is None else self.blame.to_json()}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict) -> Diagnosis:
        f = d.get("fix")
        evidence = d.get("evidence", "")
        # the JSON keeps the contract's three keys; the upstream op of `inherited` is in its evidence
        pointing = ("inherited", "mixed_ranges", "channel_imbalance")  # the last two: a layer pointing at the cause
        m = re.search(r"comes from op (\d+)", evidence) if d["cause"] in pointing else None
        return cls(d["cause"], evidence, None if f is None else Fix(f["edit"], tuple(f["ops"])), int(m.group(1)) if m else None,
                   Blame.from_json(d.get("blame")))
