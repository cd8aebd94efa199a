"""`tflite-inspector compare-runtimes QUANT`: where two runtimes (or thread counts) diverge.

Runs the quantized model on both sides in the worker process and prints, per layer, the share
of elements that differ and the largest difference in LSB, marks the first op where they
diverge, and says which kernel departs from the spec's integer math (conv, depthwise, FC, ADD).
"""

from __future__ import annotations

import argparse
import sys

from inspector.cli.sample_flags import add_sample_flags, sample_settings, use_example_inputs
from inspector.core.errors import InputError
from inspector.core.runtime.runtimes import RUNTIMES
from inspector.core.writing import write_json_output


def add_parser(sub) -> None:
    p = sub.add_parser("compare-runtimes", help="run a quantized model on two runtimes or thread counts, layer by layer")
    p.add_argument("quant_model", metavar="QUANT", help="quantized .tflite")
    p.add_argument("--runtimes", metavar="A,B",
                   help=f"the two runtimes ({', '.join(RUNTIMES)}; default reference,optimized, "
                        "or one runtime for both sides when --threads gives two counts)")
    p.add_argument("--threads", metavar="N[,M]", help="threads per side (default 1; two counts compare thread counts)")
    add_sample_flags(p, stateful=True)
    p.add_argument("--signature", metavar="KEY",
                   help="run this signature's subgraph (its inputs, ops and outputs; default: subgraph 0)")
    p.add_argument("--json", metavar="PATH", help="write JSON to PATH ('-' for standard output, no table)")


def _list(text: str | None, what: str, cast) -> list | None:
    if text is None:
        return None
    items = [x.strip() for x in text.split(",") if x.strip()]
    if not 1 <= len(items) <= 2:
        raise InputError(f"{what} takes one or two comma-separated values, got '{text}'")
    try:
        return [cast(x) for x in items]
    except ValueError:
        raise InputError(f"{what}: '{text}' is not a list of {cast.__name__} values") from None


def parity_options(args: argparse.Namespace):
    from inspector.core.compare.parity_result import ParityOptions

    runtimes = _list(args.runtimes, "--runtimes", str)
    threads = _list(args.threads, "--threads", int)
    if runtimes is None:
        runtimes = ["optimized"] if threads is not None and len(threads) == 2 else ["reference", "optimized"]
    threads = threads or [1]
    for r in runtimes:
        if r not in RUNTIMES:
            raise InputError(f"--runtimes: unknown runtime '{r}'; choose from {', '.join(RUNTIMES)}")
    if any(t < 1 for t in threads):
        raise InputError(f"--threads: thread counts must be at least 1, got {args.threads}")
    if len(runtimes) == 1 and len(threads) == 1:
        raise InputError("nothing to compare: give two runtimes (--runtimes A,B) or two thread counts (--threads N,M)")
    runtimes, threads = runtimes * (3 - len(runtimes)), threads * (3 - len(threads))  # one value serves both sides
    return ParityOptions(
        runtimes=(runtimes[0], runtimes[1]), threads=(threads[0], threads[1]),
        samples=sample_settings(args), signature=getattr(args, "signature", None),
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    from inspector.core.compare.parity_result import parity_table
    from inspector.core.compare.runtime_parity import compare_runtimes
    from inspector.core.runtime.worker import run_isolated

    note = use_example_inputs(args, "compare-runtimes", (args.quant_model,))  # the bundled int8 model: its inputs
    opts = parity_options(args)
    result = run_isolated(compare_runtimes, args.quant_model, opts, step="running the model on both runtimes",
                          models=(args.quant_model,))  # fmt: skip
    if args.json:
        write_json_output(result.to_json(), args.json)
    if args.json != "-":
        print(parity_table(result))
    if note:
        print(note, file=sys.stderr)
    return 0
