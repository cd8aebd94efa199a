"""The gain of an edit that calibrated, measured on the samples it did not calibrate on.

`held_out_gain` splits the samples the same way the edit did (`samples.holdout.split_samples`)
and measures model B's first output against model A on the evaluation part only (a
concatenated output by its worst slice), before and after the edit (`objective.Objective`: A's values computed once, each model run once). With too
few samples the split is in-sample and the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.compare.pairing import pair_models
from inspector.core.requantize.objective import Objective
from inspector.core.samples.holdout import HELD_OUT, SampleSplit, split_samples
from inspector.core.samples.spec import Sample
from inspector.core.text.numbers import db
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature
from inspector.core.writing import json_float


@dataclass(frozen=True)
class HeldOutGain:
    split: SampleSplit
    output: str  # B's output tensor measured
    before_db: float
    after_db: float
    part_before: str = ""  # the output's worst part when it is a concatenation's slice ("": the whole tensor)
    part_after: str = ""

    @property
    def gain_db(self) -> float:
        return self.after_db - self.before_db

    def to_json(self) -> dict[str, Any]:
        """Hand-written (not `codec.json_record`): the split's keys spread in, the worst parts only when measured."""
        f = json_float

        parts = {"worst_part_before": self.part_before or None, "worst_part_after": self.part_after or None}
        return {**self.split.to_json(), "output": self.output, "output_sqnr_db_before": f(self.before_db),
                "output_sqnr_db_after": f(self.after_db), "gain_db": f(self.gain_db),
                **(parts if self.part_before or self.part_after else {})}

    def text(self) -> str:
        s = self.split
        where = (f"on the {s.evaluation_count} held-out samples not used for calibration (calibrated on {s.calibration_count})"
                 if s.evaluation == HELD_OUT else
                 f"in-sample: on the same {s.total} samples it calibrated on (too few to hold 8 out)")  # fmt: skip
        gain = f"{self.gain_db:+.2f} dB" if math.isfinite(self.gain_db) else "exact"
        worst = (f" (its worst part: {self.part_before or 'the whole tensor'} before, {self.part_after or 'the whole tensor'} after)"
                 if self.part_before or self.part_after else "")
        worse = ("; the edit lowers the output SQNR: not worth keeping"
                 if self.gain_db < -LOWERED_DB else "")  # fmt: skip
        return f"output SQNR {db(self.before_db, 2, unit=True)} → {db(self.after_db, 2, unit=True)} ({gain}) {where}{worst}{worse}"


LOWERED_DB = 0.05  # a held-out loss beyond this is said (below: rounding)


def held_out_gain(
    float_path: str, quant_path: str, new_bytes: bytes, samples: Sequence[Sample], runtime: str = "optimized",
    signature: str | None = None,
) -> HeldOutGain:
    """Output SQNR of B (`quant_path`) and of the edited bytes on the evaluation samples."""
    split = split_samples(len(samples))
    fm = select_signature(load_model(float_path), signature)
    qm = select_signature(load_model(quant_path), signature)
    out = qm.main.outputs[0]
    objective = Objective(fm, qm, pair_models(fm, qm), [out], split.evaluation_of(samples), runtime, signature)
    before = objective.reading(Path(quant_path).read_bytes())
    after = objective.reading(new_bytes)
    return HeldOutGain(split, qm.main.tensors[out].name, before.sqnr_db, after.sqnr_db, before.part, after.part)
