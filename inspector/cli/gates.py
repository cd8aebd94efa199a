"""Release gates shared by `compare` and `report`: print what crossed the line, return 0 or 1."""

from __future__ import annotations

import sys

from inspector.core.compare.task import TaskResult
from inspector.core.errors import InputError


def accuracy_gate(task: TaskResult | None, max_drop_pct: float, inputs: str | None) -> int:
    """Exit code for `--fail-on-accuracy-drop`, from the comparison's task metrics."""
    drop = None if task is None else task.accuracy_drop_pct
    if drop is None:
        raise InputError(
            "--fail-on-accuracy-drop needs labelled samples (an image folder with one subfolder per class, "
            "or an .npz with a 'labels' array) and a classification output",
            inputs,
        )
    if drop <= max_drop_pct:
        return 0
    assert task is not None and task.float_accuracy is not None and task.quant_accuracy is not None
    print(
        f"FAIL: accuracy dropped {drop:.2f} points ({100 * task.float_accuracy:.2f}% float -> "
        f"{100 * task.quant_accuracy:.2f}% quantized), more than {max_drop_pct:g}",
        file=sys.stderr,
    )
    flipped = [w for w in task.worst() if w.flipped]  # the worst 10, as the JSON lists them
    if flipped:
        print("flipped samples: " + ", ".join(f"#{w.index} {w.source}" for w in flipped), file=sys.stderr)
    return 1
