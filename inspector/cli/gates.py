"""Release gates shared by `compare` and `report`: print what crossed the line, return 0 or 1."""

from __future__ import annotations

import sys

from inspector.core.errors import InputError


def accuracy_gate(task: dict | None, max_drop_pct: float, inputs: str | None) -> int:
    """Exit code for `--fail-on-accuracy-drop`, from the comparison JSON's "task" dict."""
    drop = None if not task else task.get("accuracy_drop_pct")
    if drop is None:
        raise InputError(
            "--fail-on-accuracy-drop needs labelled samples (an image folder with one subfolder per class, "
            "or an .npz with a 'labels' array) and a classification output",
            inputs,
        )
    if drop <= max_drop_pct:
        return 0
    print(
        f"FAIL: accuracy dropped {drop:.2f} points ({100 * task['float_accuracy']:.2f}% float -> "
        f"{100 * task['quant_accuracy']:.2f}% quantized), more than {max_drop_pct:g}",
        file=sys.stderr,
    )
    flipped = [w for w in task.get("worst_samples", []) if w.get("flipped")]
    if flipped:
        print("flipped samples: " + ", ".join(f"#{w['index']} {w['source']}" for w in flipped), file=sys.stderr)
    return 1
