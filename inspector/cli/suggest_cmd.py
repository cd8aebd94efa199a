"""`tflite-inspector suggest FLOAT QUANT --target-sqnr DB [--route surgical|quantizer] ...`.

Default route: surgical edits of QUANT (keep float, per-channel, bias correction, a16w8), each
verified; `--route quantizer` requantizes FLOAT with litert-quantizer instead.
Exit 0 when the suggestion meets the target, 1 when no plan within the budget does.
"""

from __future__ import annotations

import argparse
import sys

from inspector.cli.sample_flags import (
    add_sample_flags,
    input_mapping_note,
    sample_flags,
    sample_settings,
    use_example_inputs,
)
from inspector.core.errors import InputError
from inspector.core.requantize.suggest_options import SuggestOptions, SurgicalSuggestOptions


def add_parser(sub) -> None:
    p = sub.add_parser(
        "suggest",
        help="find a few edits of QUANT (or layers to keep float) so the output reaches a target SQNR",
        description="Greedy search, verified by editing QUANT (surgical, default) or requantizing "
        "FLOAT (--route quantizer) and comparing; QUANT gives the first ranking of layers.",
    )
    p.add_argument(
        "--route",
        default="surgical",
        choices=["surgical", "quantizer"],
        help="surgical: edit QUANT's selected ops (default); quantizer: requantize FLOAT with litert-quantizer",
    )
    p.add_argument(
        "--objective",
        metavar="P",
        help="surgical: the op(s) whose output SQNR must reach the target (regex over QUANT's op "
        "output names or op:INDEX; default the model outputs)",
    )
    p.add_argument("--signature", metavar="KEY",
                   help="surgical: rank and edit this signature's subgraph (default: subgraph 0)")  # fmt: skip
    p.add_argument("--out", metavar="NEW.tflite", help="surgical: write the suggested model")
    p.add_argument("--save-plan", metavar="PLAN.json", help="surgical: write the suggested plan")
    p.add_argument("float_model", metavar="FLOAT", help="the float .tflite model")
    p.add_argument("quant_model", metavar="QUANT", help="its quantized twin")
    p.add_argument("--target-sqnr", type=float, metavar="DB", help="output SQNR to reach, in dB (required unless --max-float-layers K alone bounds the search)")
    p.add_argument(
        "--max-float-layers", type=int, metavar="K", help="at most K layers moved (default 8)"
    )
    p.add_argument(
        "--treatment",
        default="keep_float",
        choices=["keep_float", "a16w8"],
        help="quantizer route: what moved layers become",
    )
    add_sample_flags(p, what="comparison/calibration samples")
    from inspector.cli.pair_flag import add_allow_unrelated_flag

    add_allow_unrelated_flag(p)
    p.add_argument("--candidates", type=int, metavar="N",
                   help=f"worst layers tried one at a time (default {SurgicalSuggestOptions.candidates})")  # fmt: skip
    p.add_argument("--max-evaluations", type=int, metavar="N",
                   help=f"models evaluated at most (default {SurgicalSuggestOptions.max_evaluations} on the surgical "
                        f"route, as in the GUI; {SuggestOptions.max_evaluations} requantize+compare runs on the quantizer route)")  # fmt: skip
    p.add_argument(
        "--json",
        metavar="PATH",
        help="write the suggestion and trade-off points as JSON ('-' for stdout)",
    )


def _defaults(args: argparse.Namespace) -> None:
    """Unset budgets come from the route's option dataclass (the GUI builds the same options)."""
    opts = SurgicalSuggestOptions if args.route == "surgical" else SuggestOptions
    if args.candidates is None:
        args.candidates = opts.candidates
    if args.max_evaluations is None:
        args.max_evaluations = opts.max_evaluations


def run(args: argparse.Namespace) -> int:
    """Both routes; on the bundled example pair without --inputs, its bundled inputs (as compare
    and report: random samples clip where the real ones do not, and Suggest chased that)."""
    note = use_example_inputs(args, "suggest")
    mapping = input_mapping_note(args, "suggest", args.float_model)
    code = _run(args)
    for line in (note, mapping):
        if line:
            print(line, file=sys.stderr)
    return code


def _warn_random(samples) -> None:
    """Suggest re-calibrates and measures on the samples: say so when they are random (after the
    run, as requantize does: a pair or request that is refused stays one line)."""
    from inspector.core.requantize.calibration_source import random_calibration_warning

    line = random_calibration_warning(samples, "suggest")
    if line:
        print(line, file=sys.stderr)


def _with_calibration(d: dict, samples) -> dict:
    from inspector.core.requantize.calibration_source import with_calibration_source

    return with_calibration_source(d, samples)


def _run(args: argparse.Namespace) -> int:
    from inspector.core.viewdata.suggest_view import suggest_lines, suggest_view
    from inspector.core.writing import write_json_output

    _defaults(args)

    if args.target_sqnr is None and args.max_float_layers is None:
        raise InputError("give --target-sqnr DB (and optionally --max-float-layers K)")
    samples = sample_settings(args)
    for flag, v in (
        ("--candidates", args.candidates),
        ("--max-evaluations", args.max_evaluations),
    ):
        if v < 1:
            raise InputError(f"{flag} must be at least 1")
    if args.max_float_layers is not None and args.max_float_layers < 0:
        raise InputError("--max-float-layers must be 0 or more")
    from inspector.cli.pair_guard import check_pair_args

    check_pair_args(args, "suggest")  # the pair compare would refuse is refused here too, before any warning
    if args.route == "surgical":
        return _run_surgical(args)
    if args.objective or args.out or args.save_plan or args.signature:
        raise InputError("--objective, --signature, --out and --save-plan belong to the surgical route")
    opts = SuggestOptions(
        samples=samples,
        treatment=args.treatment,
        max_layers=args.max_float_layers,
        candidates=args.candidates,
        max_evaluations=args.max_evaluations,
    )
    from inspector.core.requantize.jobs import suggest_job
    from inspector.core.runtime.worker import run_isolated

    result = run_isolated(
        suggest_job, args.float_model, args.quant_model, args.target_sqnr, opts,
        step="suggesting (requantizing and comparing candidates)", models=(args.float_model, args.quant_model),
    )  # fmt: skip
    _warn_random(samples)  # once it ran: a refused pair stays one line
    if args.json:
        write_json_output(_with_calibration(result.to_json(), samples), args.json)
    out = sys.stderr if args.json == "-" else sys.stdout
    for line in suggest_lines(suggest_view(result)):
        print(line, file=out)
    if result.layers:
        flags = " ".join(
            f"--{result.treatment.replace('_', '-')} op:{x['op']}" for x in result.layers
        )
        print(
            f"reproduce: tflite-inspector requantize {args.float_model} --out NEW.tflite --base {result.base} {flags}",
            file=out,
        )
    return 0 if result.met else 1


def _run_surgical(args: argparse.Namespace) -> int:
    from inspector.core.requantize.jobs import surgical_suggest_job
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.viewdata.suggest_view import suggest_lines, suggest_view
    from inspector.core.writing import atomic_write_bytes, refuse_if_input, write_json_output

    if args.treatment != "keep_float":
        raise InputError("--treatment belongs to the quantizer route; the surgical route tries every edit")
    for target, what in ((args.out, "--out"), (args.save_plan, "--save-plan")):
        refuse_if_input(target, what)
    if args.signature is not None:
        from inspector.core.tflite.model import load_model
        from inspector.core.tflite.signatures import select_signature

        select_signature(load_model(args.quant_model), args.signature)  # an unknown key: one line naming the keys
    opts = SurgicalSuggestOptions(
        samples=sample_settings(args), candidates=args.candidates,
        max_steps=args.max_float_layers, max_evaluations=args.max_evaluations, objective=args.objective,
        signature=args.signature,
    )  # fmt: skip
    result = run_isolated(
        surgical_suggest_job, args.float_model, args.quant_model, args.target_sqnr, opts,
        step="suggesting (editing QUANT and comparing candidates)", models=(args.float_model, args.quant_model),
    )  # fmt: skip
    _warn_random(opts.samples)  # once it ran: a refused pair stays one line
    if args.json:
        write_json_output(_with_calibration(result.to_json(), sample_settings(args)), args.json)
    if args.out and result.best is not None:
        atomic_write_bytes(args.out, result.best.model_bytes)
    if args.save_plan and result.plan is not None:
        write_json_output(result.plan.to_json(), args.save_plan)
    out = sys.stderr if args.json == "-" else sys.stdout
    at = None if args.objective is None else f"the objective ({', '.join(result.objective)})"
    for line in suggest_lines(suggest_view(result, at)):
        print(line, file=out)
    print(f"given: {result.baseline_size_bytes:,} bytes, {result.baseline_latency_ms:.2f} ms (XNNPACK, 1 thread)", file=out)
    if result.plan is not None:
        flags = " ".join(f"--{e.kind.replace('_', '-')} op:{e.ops[0]}" for e in result.plan.edits)
        flags = flags.replace("--weight-mse", "--weight-rounding mse")
        if result.plan.needs_samples():
            flags += f" {sample_flags(sample_settings(args))}"
        if args.signature:
            flags += f" --signature {args.signature}"
        print(f"reproduce: tflite-inspector requantize {args.float_model} {args.quant_model} --out NEW.tflite {flags}", file=out)
    return 0 if result.met else 1
