"""`tflite-inspector suggest FLOAT QUANT --target-sqnr DB [--json PATH] [--max-float-layers K]`.

Exit 0 when the suggestion meets the target, 1 when no plan within the budget does.
"""

from __future__ import annotations

import argparse
import math
import sys

from inspector.core.errors import InputError


def add_parser(sub) -> None:
    p = sub.add_parser(
        "suggest",
        help="find a few layers to keep float (or a16w8) so the output reaches a target SQNR",
        description="Greedy search, verified by requantizing FLOAT and comparing; QUANT gives the "
        "base scheme and the first ranking of layers.",
    )
    p.add_argument("float_model", metavar="FLOAT", help="the float .tflite model")
    p.add_argument("quant_model", metavar="QUANT", help="its quantized twin")
    p.add_argument("--target-sqnr", type=float, metavar="DB", help="output SQNR to reach, in dB")
    p.add_argument(
        "--max-float-layers", type=int, metavar="K", help="at most K layers moved (default 8)"
    )
    p.add_argument(
        "--treatment",
        default="keep_float",
        choices=["keep_float", "a16w8"],
        help="what moved layers become",
    )
    p.add_argument(
        "--samples",
        type=int,
        default=8,
        metavar="N",
        help="comparison/calibration samples (default 8)",
    )
    p.add_argument(
        "--inputs", metavar="PATH", help="comparison samples: .npy/.npz or a folder of images"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--candidates", type=int, default=6, metavar="N", help="worst layers considered (default 6)"
    )
    p.add_argument(
        "--max-evaluations",
        type=int,
        default=24,
        metavar="N",
        help="requantize+compare runs at most (default 24)",
    )
    p.add_argument(
        "--json",
        metavar="PATH",
        help="write the suggestion and trade-off points as JSON ('-' for stdout)",
    )


def run(args: argparse.Namespace) -> int:
    from inspector.core.suggest import SuggestOptions
    from inspector.core.writing import write_json_output

    if args.target_sqnr is None and args.max_float_layers is None:
        raise InputError("give --target-sqnr DB (and optionally --max-float-layers K)")
    for flag, v in (
        ("--samples", args.samples),
        ("--candidates", args.candidates),
        ("--max-evaluations", args.max_evaluations),
    ):
        if v < 1:
            raise InputError(f"{flag} must be at least 1")
    if args.max_float_layers is not None and args.max_float_layers < 0:
        raise InputError("--max-float-layers must be 0 or more")
    opts = SuggestOptions(
        samples=args.samples,
        seed=args.seed,
        inputs=args.inputs,
        treatment=args.treatment,
        max_layers=args.max_float_layers,
        candidates=args.candidates,
        max_evaluations=args.max_evaluations,
    )
    from inspector.core.isolation import run_isolated
    from inspector.core.requant_jobs import suggest_cli_job

    result = run_isolated(
        suggest_cli_job, args.float_model, args.quant_model, args.target_sqnr, opts,
        step="suggesting (requantizing and comparing candidates)", models=(args.float_model, args.quant_model),
    )  # fmt: skip
    if args.json:
        write_json_output(result.to_json(), args.json)
    out = sys.stderr if args.json == "-" else sys.stdout
    last = result.layers[-1]["output_sqnr_db"] if result.layers else result.points[1].output_sqnr_db
    print(
        f"base {result.base}; output SQNR {_db(result.points[0].output_sqnr_db)} (given) -> {_db(last)} with {len(result.layers)} layer(s) {result.treatment}",
        file=out,
    )
    for x in result.layers:
        print(f"  op {x['op']:>4} {x['type']:<20} {x['tensor']}  +{x['gain_db']:.2f} dB", file=out)
    if result.layers:
        flags = " ".join(
            f"--{result.treatment.replace('_', '-')} op:{x['op']}" for x in result.layers
        )
        print(
            f"reproduce: tflite-inspector requantize {args.float_model} --out NEW.tflite --base {result.base} {flags}",
            file=out,
        )
    for note in result.notes:
        print(f"note: {note}", file=out)
    return 0 if result.met else 1


def _db(v: float) -> str:
    return "inf dB" if math.isinf(v) else f"{v:.2f} dB"
