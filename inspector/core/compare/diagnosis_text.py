"""The root causes in words, the same everywhere (CLI table, report headline, GUI summary strip):

    op 1 RESHAPE, input range clipped: 99% of the output error; fix: re-calibrate op 1 -> +18.6 dB,
    held-out accuracy 93.8 -> 98.4% (float 98.4%)

Read from `ComparisonResult.root_causes` (measured by `requantize.blame`); nothing here computes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from inspector.core.compare.diagnosis_types import Fix, RootCause
from inspector.core.text.numbers import signed_db

if TYPE_CHECKING:
    from inspector.core.compare.result import ComparisonResult

FIX_LABELS = {
    "recalibrate": "re-calibrate", "a16w8": "16-bit activations", "per_channel": "per-channel weights",
    "weight_rounding": "MSE weight scales", "bias_correct": "bias correction", "keep_float": "keep float",
    "equalize": "equalize", "input_range": "widen the input range",
    "relu6_equalize": "ReLU6 -> ReLU, then equalize (changes the float function)",
}  # fmt: skip
CAUSE_WORDS = {
    "input_range": "input range clipped", "clipping": "output range clipped", "resolution": "range too coarse",
    "mixed_ranges": "concatenated ranges differ", "channel_imbalance": "channel ranges imbalanced",
    "weight_channels": "per-tensor weights over uneven channels", "weight_rounding": "weights rounded poorly",
    "bias_shift": "bias shifted", "kernel": "kernel departs from the spec", "own_error": "its own quantization error",
}  # fmt: skip


def fix_words(fix: Fix | None) -> str:
    if fix is None:
        return "no edit"
    return f"{FIX_LABELS.get(fix.edit, fix.edit)} op {', '.join(map(str, fix.ops))}"


def root_cause_text(rc: RootCause) -> str:
    """One root cause in one line."""
    where = "the model input" if rc.op_index < 0 else f"op {rc.op_index} {rc.op_type}"
    line = f"{where}, {CAUSE_WORDS.get(rc.cause, rc.cause.replace('_', ' '))}: {100 * rc.share:.0f}% of the output error"
    if rc.fix is None:
        line += f" (removing it: {signed_db(rc.gain_db)} dB); no fix measured"
    else:
        line += f"; fix: {fix_words(rc.fix)} -> {signed_db(rc.fix_gain_db)} dB"
        if rc.accuracy is not None:
            f, b, a = rc.accuracy
            line += f", held-out accuracy {b:.1f} -> {a:.1f}% (float {f:.1f}%)"
    if rc.note:
        line += f" ({rc.note})"
    return line


def root_cause_lines(result: ComparisonResult) -> list[str]:
    """The root-cause block that leads the CLI table and the report ([] when blame was not asked)."""
    if not result.blame_note:
        return []
    if not result.blame_note.startswith("blame:"):  # not measured, and why
        return [result.blame_note]
    if not result.root_causes:
        return ["root cause: none - no measured op carries 10% of the output error (the error is spread, or small)"]
    head = "root cause:" if len(result.root_causes) == 1 else "root causes (largest share first):"
    return [head, *(f"  {root_cause_text(rc)}" for rc in result.root_causes)]
