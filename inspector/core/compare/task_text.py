"""The task metrics in a few readable lines (the CLI's `compare` and `report`)."""

from __future__ import annotations

import math

from inspector.core.compare.task import TaskResult


def task_summary(task: TaskResult, worst: int = 5) -> str:
    """A few readable lines for the CLI."""

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.2f}%"

    lines = [f"task ({task.kind}, {task.num_samples} samples): {task.reason}" if task.reason else f"task ({task.kind}, {task.num_samples} samples):"]
    if task.kind == "classification":
        if task.float_accuracy is not None:
            lines.append(
                f"  accuracy float {pct(task.float_accuracy)}  quantized {pct(task.quant_accuracy)}  "
                f"drop {task.accuracy_drop_pct:.2f} points"
            )
        if task.top1_agreement is None:
            lines.append(f"  top-1/top-5 agreement not reported: {task.agreement_note}")
        else:
            parts = [f"{task.tied_samples} tied in float left out"] if task.tied_samples else []
            parts += [f"{task.lost_decisions} tied in quantized counted as lost"] if task.lost_decisions else []
            counted = f" (over {task.agreement_samples} samples: {', '.join(parts)})" if parts else ""
            lines.append(f"  top-1 agreement {pct(task.top1_agreement)}  top-5 agreement {pct(task.top5_agreement)}{counted}")
    elif task.regression is not None:
        lines.append(f"  {task.regression.summary()}")
        lines += [f"  {s.line()}" for s in task.slices]
    for w in task.warnings:
        lines.append(f"  WARNING: {w}")
    for o in task.worst(worst):
        s = "inf" if math.isinf(o.output_sqnr_db) else f"{o.output_sqnr_db:.1f}"
        if task.kind == "regression":
            lines.append(f"  worst #{o.index} {o.source}: RMSE {o.rmse:.4g}  MAE {o.mae:.4g}  max error {o.max_abs:.4g}  output SQNR {s} dB")
            continue
        flip = (f" FLIPPED {o.float_pred}->tied (lost decision)" if o.flipped and o.quant_tied else
                f" FLIPPED {o.float_pred}->{o.quant_pred}" if o.flipped else "")  # fmt: skip
        label = "" if o.label is None else f" label {o.label}"
        lines.append(f"  worst #{o.index} {o.source}{label}: output SQNR {s} dB{flip}")
    return "\n".join(lines)
