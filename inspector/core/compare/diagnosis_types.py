"""The diagnosis of one layer (`diagnosis.py` computes it): a cause, one line of evidence with the
figures, and the surgical edit that addresses it. JSON: {"cause", "evidence", "fix": {"edit",
"ops"} | null} (issue 21).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Fix:
    edit: str  # one of EDITS
    ops: tuple[int, ...]  # B op indices

    def to_json(self) -> dict:
        return {"edit": self.edit, "ops": list(self.ops)}


@dataclass(frozen=True)
class Diagnosis:
    cause: str  # one of CAUSES
    evidence: str  # one line with the figures
    fix: Fix | None = None
    source_op: int | None = None  # inherited: the upstream B op the error comes from

    def to_json(self) -> dict:
        return {"cause": self.cause, "evidence": self.evidence, "fix": None if self.fix is None else self.fix.to_json()}

    @classmethod
    def from_json(cls, d: dict) -> Diagnosis:
        f = d.get("fix")
        evidence = d.get("evidence", "")
        # the JSON keeps the contract's three keys; the upstream op of `inherited` is in its evidence
        pointing = ("inherited", "mixed_ranges", "channel_imbalance")  # the last two: a layer pointing at the cause
        m = re.search(r"comes from op (\d+)", evidence) if d["cause"] in pointing else None
        return cls(d["cause"], evidence, None if f is None else Fix(f["edit"], tuple(f["ops"])), int(m.group(1)) if m else None)
