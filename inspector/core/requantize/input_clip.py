"""The range of an integer model input against the real values the samples give it.

An integer-input model (int8/uint8 graph input with a scale and zero point, no QUANTIZE op: the
TF converter's `inference_input_type=tf.int8`, litert-quantizer's int8 I/O) holds its first
quantizer itself: the caller quantizes with the input's parameters, and the values beyond its
range clip there. `input_clips` measures the share of them on the samples (float values, as the
caller has them before quantizing); blame and Suggest measure the `input_range` edit that widens
the input (`recalibrate.widen_input`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from inspector.core.requantize.recalibrate import input_grid, input_values, integer_inputs
from inspector.core.samples.spec import Sample
from inspector.core.tflite.model import Model

INPUT_CLIP_SHARE = 0.001  # an integer model input clipping this share of its real values is a candidate


@dataclass(frozen=True)
class InputClip:
    """An integer model input's own range against the real values the samples give it."""

    op: int  # the first op reading it
    tensor: int
    name: str
    share: float  # of the real input values beyond the input's int8/uint8 range
    lo: float
    hi: float  # the range its scale and zero point represent

    def evidence(self) -> str:
        return (f"{100 * self.share:.1f}% of the real values of model input '{self.name}' lie beyond its integer range "
                f"[{self.lo:.4g}, {self.hi:.4g}] (the caller quantizes with the input's own scale and zero point)")


def input_clips(qm: Model, samples: Sequence[Sample]) -> dict[int, InputClip]:
    """{op reading it: InputClip} for each integer model input whose real values clip."""
    sg = qm.main
    consumers = sg.consumers()
    out: dict[int, InputClip] = {}
    for t in sg.inputs:
        readers = [c.index for c in consumers.get(t, [])]
        if not readers or t not in integer_inputs(qm, readers[0]) or not samples:  # t itself, not another input of its reader
            continue
        lo, hi = input_grid(sg.tensors[t])
        values = input_values(qm, samples, t)
        beyond = sum(int(np.count_nonzero((v < lo) | (v > hi))) for v in values)
        share = beyond / max(sum(v.size for v in values), 1)
        if share >= INPUT_CLIP_SHARE:
            out[readers[0]] = InputClip(readers[0], t, sg.tensors[t].name, share, lo, hi)
    return out
