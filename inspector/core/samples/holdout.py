"""Calibration samples vs held-out evaluation samples: the one split every calibrating edit uses.

Bias correction, re-calibration, 16-bit activations and Suggest fit numbers to samples; a gain
measured on those same samples is partly the fit itself. So the comparison's samples are split
deterministically, in order: the first ceil(2/3) calibrate, the rest are held out and only
they measure the gain. With fewer than MIN_HELD_OUT held-out samples (under 24 samples), every
sample calibrates and measures, and the result says the gain is in-sample.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.samples.settings import DEFAULT_COUNT

T = TypeVar("T")

CALIBRATION_SHARE = 2 / 3
MIN_HELD_OUT = DEFAULT_COUNT  # a gain is measured on at least as many samples as a default comparison has
HELD_OUT = "held-out"
IN_SAMPLE = "in-sample"


@dataclass(frozen=True)
class SampleSplit(JsonRecord):
    total: int = json_field(skip=True)  # = evaluation_start + evaluation_samples
    calibration_count: int = json_field(key="calibration_samples")
    evaluation_start: int = json_field()  # evaluation samples: [evaluation_start, total)

    JSON_EXTRA = {"evaluation": lambda s: s.evaluation, "evaluation_samples": lambda s: s.evaluation_count, "note": lambda s: s.note}
    JSON_KEYS = ("evaluation", "calibration_samples", "evaluation_samples", "evaluation_start", "note")

    @property
    def evaluation(self) -> str:
        """"held-out" or "in-sample"."""
        return HELD_OUT if self.evaluation_start > 0 else IN_SAMPLE

    @property
    def evaluation_count(self) -> int:
        return self.total - self.evaluation_start

    def calibration(self, samples: Sequence[T]) -> list[T]:
        return list(samples[: self.calibration_count])

    def evaluation_of(self, samples: Sequence[T]) -> list[T]:
        return list(samples[self.evaluation_start :])

    @property
    def note(self) -> str:
        if self.evaluation == HELD_OUT:
            return (f"calibrated on samples 0-{self.calibration_count - 1}; gains measured on the "
                    f"{self.evaluation_count} held-out samples {self.evaluation_start}-{self.total - 1}")  # fmt: skip
        return (f"in-sample: {self.total} sample(s) are too few to hold {MIN_HELD_OUT} out (give at least "
                f"{3 * MIN_HELD_OUT}), so the same samples calibrate and measure; the gain includes fitting them")  # fmt: skip



def split_samples(total: int) -> SampleSplit:
    """The split of `total` samples (in order): calibration first, held-out evaluation last."""
    calibration = math.ceil(total * CALIBRATION_SHARE)
    if total - calibration < MIN_HELD_OUT:
        return SampleSplit(total, total, 0)
    return SampleSplit(total, calibration, calibration)
