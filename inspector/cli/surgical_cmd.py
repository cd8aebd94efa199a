"""`tflite-inspector requantize FLOAT QUANT --out NEW.tflite [edits]`: surgical edits of QUANT.

Edits: --keep-float P, --a16w8 P, --per-channel P, --weight-rounding mse P, --bias-correct P|all,
--recalibrate P [--calibration minmax|mse|percentile:99.99], --equalize P (the producer; its one
consumer is found), --relu6-equalize P (DFQ: the producer's ReLU6 becomes ReLU, measured as a change
of the float function, then equalize); or --plan PLAN.json. The work runs in the worker process; the model, the plan
and the JSON summary are written by `core/writing`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from inspector.cli.sample_flags import sample_settings
from inspector.core.errors import InputError

SURGICAL_LAYER_FLAGS = ("keep_float", "a16w8")


def _plan(args: argparse.Namespace):
    from inspector.core.requantize.surgical_plan import (
        Edit,
        SurgicalPlan,
        check_calibration,
        load_plan,
    )

    edits = []
    for treatment, pattern in args.layers:
        if treatment not in SURGICAL_LAYER_FLAGS:
            flag = "--" + treatment.replace("_", "-")
            raise InputError(f"{flag} belongs to the quantizer route (FLOAT only); with QUANT use --keep-float, --a16w8, "
                             f"--per-channel, --weight-rounding, --bias-correct, --recalibrate, --equalize or --relu6-equalize")
        edits.append(Edit(treatment, pattern))
    check_calibration(args.calibration)
    for kind, pattern in args.edits:
        edits.append(Edit(kind, pattern, args.calibration if kind == "recalibrate" else None))
    if args.plan:
        if edits:
            raise InputError("--plan replaces the edit options; give one or the other")
        plan = load_plan(args.plan)
        if args.inputs or args.samples is not None:
            from dataclasses import replace

            plan = replace(plan, samples=sample_settings(args))
        return plan
    if not edits:
        raise InputError("give at least one edit (--keep-float, --a16w8, --per-channel, --weight-rounding mse, --bias-correct, "
                         "--recalibrate, --equalize, --relu6-equalize) or --plan")
    return SurgicalPlan(tuple(edits), samples=sample_settings(args))


def _with_signature(plan, quant: str, key: str | None):
    """The plan addressing the ops of signature `key`'s subgraph (`op:N` is op N there); a
    saved plan made for another signature is refused, an unknown key names the keys."""
    from dataclasses import replace

    from inspector.core.tflite.model import load_model
    from inspector.core.tflite.signatures import select_signature

    if key is None:
        key = plan.signature
    elif plan.signature is not None and plan.signature != key:
        raise InputError(f"the plan edits signature '{plan.signature}', not '{key}'")
    if key is not None:
        select_signature(load_model(quant), key)  # an unknown key: InputError naming the keys
    return replace(plan, signature=key)


def run_surgical(args: argparse.Namespace) -> int:
    from inspector.core.requantize.jobs import surgical_job
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.writing import atomic_write_bytes, refuse_if_input, write_json_output

    if args.recipe or args.save_recipe or args.per_tensor or args.base != "int8" or args.algorithm != "min_max":
        raise InputError("--base, --per-tensor, --algorithm, --recipe and --save-recipe belong to the quantizer route (FLOAT only)")
    for target, what in ((args.out, "--out"), (args.save_plan, "--save-plan"), (args.json, "--json")):
        refuse_if_input(target, what)
    if Path(args.out).is_dir():
        raise InputError("the output path is a folder", args.out)
    from inspector.cli.pair_guard import check_pair_args

    check_pair_args(args, "requantize", "model", "quant")  # the one pair check (compare's), swapped back if need be
    plan = _with_signature(_plan(args), args.quant, args.signature)
    from inspector.core.requantize.calibration_source import (
        random_calibration_warning,
        with_calibration_source,
    )

    run = run_isolated(
        surgical_job, args.model, args.quant, plan,
        step="editing the quantized model (measuring, validating in LiteRT)", models=(args.model, args.quant),
    )  # fmt: skip
    result = run.result
    # said once the plan is known to apply (a refused request stays one line), before the result
    warning = random_calibration_warning(plan.samples, "requantize") if plan.needs_samples() else None
    if warning:
        print(warning, file=sys.stderr)
    atomic_write_bytes(args.out, result.model_bytes)
    if args.save_plan:
        write_json_output(result.plan.to_json(), args.save_plan)
    if args.json:
        write_json_output(with_calibration_source(result.to_json(), plan.samples, plan.needs_samples()), args.json)
    out = sys.stderr if args.json == "-" else sys.stdout
    q_size = Path(args.quant).stat().st_size
    ops = ", ".join(str(i) for i in result.edited_ops)
    print(f"wrote {args.out} ({result.size_bytes:,} bytes; {args.quant} {q_size:,} bytes); edited op(s) {ops} of QUANT", file=out)
    if result.gain is not None:
        print(f"gain: {result.gain.text()}", file=out)
    for note in result.notes:
        print(f"note: {note}", file=out)
    return 0
