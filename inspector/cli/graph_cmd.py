"""`tflite-inspector graph [FLOAT] QUANT [--inputs X | --samples N] [--seed S] [--signature KEY]
[--metric sqnr|isolated|worst_channel|clip|range_use|cause] --svg OUT.svg`: the model's graph.

With one model, its structure; with a pair, the layerwise comparison (in the worker process)
colours each op of B by the metric (or its diagnosed cause). Each op of the SVG is one element
carrying `data-op="N"` (B's op index) and its fill, with a `<title>` (op, tensor, value, cause).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from inspector.cli.sample_flags import (
    add_isolated_flag,
    add_sample_flags,
    sample_settings,
    use_example_inputs,
)
from inspector.core.compare.options import CompareOptions
from inspector.core.errors import InputError
from inspector.core.graph.metric_names import METRICS


def add_parser(sub) -> None:
    p = sub.add_parser("graph", help="SVG graph of the model, ops coloured by a comparison's metric or cause")
    p.add_argument("float_model", metavar="FLOAT", help="float .tflite (or, alone, the model to draw)")
    p.add_argument("quant_model", metavar="QUANT", nargs="?", help="quantized .tflite (its graph is drawn)")
    p.add_argument("--svg", metavar="OUT.svg", required=True, help="write the graph as SVG ('-' for standard output)")
    p.add_argument("--metric", choices=METRICS, default="sqnr",
                   help="colour ops by: accumulated SQNR (default), isolated (own) SQNR, worst-channel SQNR, "
                        "clip rate, range use, or the diagnosed cause")  # fmt: skip
    add_sample_flags(p, exclusive=True, stateful=True)
    p.add_argument("--signature", metavar="KEY", help="draw (and compare) this signature's subgraph (default: subgraph 0)")
    p.add_argument("--subgraph", type=int, metavar="N",
                   help="one model: draw subgraph N (a control-flow body...) instead of the signature's")  # fmt: skip
    p.add_argument("--runtime", choices=("optimized", "reference"), default=CompareOptions.runtime,
                   help="optimized: XNNPACK as deployed (default); reference: builtin kernels")  # fmt: skip
    add_isolated_flag(p)
    from inspector.cli.pair_flag import add_allow_unrelated_flag

    add_allow_unrelated_flag(p)


def run(args: argparse.Namespace) -> int:
    from inspector.core.graph.drawing import graph_svg
    from inspector.core.keras.detect import is_keras_path
    from inspector.core.review.audit import audit_model
    from inspector.core.tflite.model import load_model
    from inspector.core.tflite.signatures import select_signature
    from inspector.core.writing import write_output

    sample_settings(args)  # bad sample flags: exit 2 before anything runs
    if is_keras_path(args.float_model):
        raise InputError("graph draws .tflite models: make the TFLite twins first (tflite-inspector convert MODEL --out-dir DIR)",
                         args.float_model)  # fmt: skip
    if args.quant_model is None and (args.samples is not None or args.inputs is not None):
        raise InputError("--samples / --inputs need both FLOAT and QUANT models (one model is drawn without a comparison)")
    if args.subgraph is not None and args.quant_model is not None:
        raise InputError("--subgraph draws one model's structure; a pair is compared and drawn through --signature")
    result, float_model, note = None, None, ""
    if args.quant_model is None:
        target = select_signature(load_model(args.float_model), args.signature)
        if args.subgraph is not None and not 0 <= args.subgraph < len(target.subgraphs):
            raise InputError(f"--subgraph {args.subgraph}: the model has {len(target.subgraphs)} subgraph(s)", args.float_model)
    else:
        result, note = _compare(args)
        float_model = select_signature(load_model(args.float_model), result.signature)
        target = select_signature(load_model(args.quant_model), result.signature)
    findings = audit_model(target, result, float_model)
    sub = target.main.index if args.subgraph is None else args.subgraph
    audit_ops = {f.op_index for f in findings if f.op_index is not None and f.subgraph == sub}
    svg = graph_svg(target, result, args.metric, audit_ops=audit_ops, subgraph=args.subgraph)
    write_output(args.svg, svg)
    if args.svg != "-":
        what = f"coloured by {args.metric}" if result is not None else "structure only"
        print(f"wrote {args.svg}: {len(target.subgraphs[sub].ops)} ops of subgraph {sub}, {what}")
    if note:
        print(note, file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace):
    from inspector.cli.pair_guard import guarded_pair
    from inspector.core.compare.in_worker import compare_in_worker

    note = use_example_inputs(args, "graph") if args.samples is None else ""
    args.float_model, args.quant_model, check = guarded_pair(
        args.float_model, args.quant_model, "graph", allow_unrelated=args.allow_unrelated, signature=args.signature)
    opts = CompareOptions(samples=sample_settings(args), runtime=args.runtime,
                          isolated=args.isolated or args.metric == "isolated", signature=args.signature)  # fmt: skip
    result = compare_in_worker(args.float_model, args.quant_model, opts, pair_check=check)
    if check.swapped:
        result = dataclasses.replace(result, swapped=True, pair_check=check)
    return result, note
