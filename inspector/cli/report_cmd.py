"""`tflite-inspector report FLOAT [QUANT] --html PATH ...`: a review report and a release gate.

With both models, runs the layerwise comparison (`core.compare.comparison`), audits the quantized model and
writes one self-contained HTML file and/or the same content as JSON, the comparison CSV and
Model Explorer node data. With one model, audits it alone. `--fail-on error|warning` exits 1
when findings at or above that severity exist, printing them (exit 2 stays for bad input).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from inspector.cli.sample_flags import (
    add_blame_flag,
    add_isolated_flag,
    add_sample_flags,
    sample_settings,
    use_example_inputs,
)
from inspector.cli.verbose import add_verbose_flag, verbose_task
from inspector.core.compare.options import CompareOptions
from inspector.core.errors import InputError, RuntimeFailure


def add_parser(sub) -> None:
    p = sub.add_parser("report", help="HTML/JSON review report: comparison, worst layers, audit, op math; CI gate")
    p.add_argument("float_model", metavar="FLOAT", help="the float model: a .tflite, or with QUANT a Keras .keras / .h5 file or a SavedModel "
                   "folder (needs the [tensorflow] extra); alone, any .tflite to audit")
    p.add_argument("quant_model", metavar="QUANT", nargs="?", help="quantized .tflite")
    p.add_argument("--html", metavar="PATH", help="write a self-contained HTML report")
    p.add_argument("--json", metavar="PATH", help="write the report as JSON ('-' for standard output)")
    p.add_argument("--csv", metavar="PATH", help="write the comparison CSV (one row per layer)")
    p.add_argument("--model-explorer", metavar="PATH", help="write per-op SQNR as Model Explorer node data JSON")
    add_sample_flags(p, exclusive=True, stateful=True)
    p.add_argument("--runtime", choices=("optimized", "reference"), default=CompareOptions.runtime,
                   help="optimized: XNNPACK as deployed (default); reference: builtin kernels, no delegates")
    add_isolated_flag(p)
    p.add_argument("--signature", metavar="KEY",
                   help="compare this signature (its subgraph, inputs and outputs; default: subgraph 0)")
    p.add_argument("--worst", type=int, default=5, metavar="N", help="worst layers to detail (default 5)")
    p.add_argument("--fail-on", choices=("error", "warning"), help="exit 1 when findings of this severity or worse exist")
    p.add_argument("--fail-on-accuracy-drop", type=float, metavar="PCT",
                   help="exit 1 when quantized accuracy is more than PCT points below float (needs labelled inputs)")
    add_blame_flag(p)
    add_verbose_flag(p)  # the Keras route's steps (loading TensorFlow, the model, converting, comparing)
    from inspector.cli.pair_flag import add_allow_unrelated_flag

    add_allow_unrelated_flag(p)


def _compare(args):
    from inspector.core.requantize.blame import compare_blame_in_worker

    opts = CompareOptions(samples=sample_settings(args), runtime=args.runtime, isolated=args.isolated,
                          signature=args.signature)  # fmt: skip
    result = compare_blame_in_worker(args.float_model, args.quant_model, opts, pair_check=args.pair_check,
                                     blame=args.blame and args.isolated)  # the root causes lead the report

    if args.pair_check is not None and args.pair_check.swapped:
        result = dataclasses.replace(result, swapped=True, pair_check=args.pair_check)
    return result


def run(args: argparse.Namespace) -> int:
    from inspector.cli.gates import accuracy_gate
    from inspector.cli.pair_guard import guarded_pair
    from inspector.core.keras.detect import is_keras_path
    from inspector.core.review.audit import Finding
    from inspector.core.review.report import build_report, write_report

    sample_settings(args)  # bad sample flags: exit 2 before anything runs
    if args.worst < 0:
        raise InputError(f"--worst must be >= 0, got {args.worst}")
    outputs = (args.html, args.json, args.csv, args.model_explorer)
    if args.fail_on_accuracy_drop is not None and not args.quant_model:
        raise InputError("--fail-on-accuracy-drop needs both FLOAT and QUANT models")
    if not any(outputs) and not args.fail_on and args.fail_on_accuracy_drop is None:
        raise InputError("nothing to do: give --html, --json, --csv, --model-explorer and/or --fail-on")
    if not args.quant_model and (args.csv or args.model_explorer):
        raise InputError("--csv and --model-explorer need both FLOAT and QUANT models (they show the comparison)")
    comparison = failure = None
    note = use_example_inputs(args, "report") if args.samples is None else ""  # --samples N: N random
    args.pair_check = None
    if args.quant_model and is_keras_path(args.float_model):
        return _run_keras(args)
    if args.quant_model:
        args.float_model, args.quant_model, args.pair_check = guarded_pair(
            args.float_model, args.quant_model, "report", allow_unrelated=args.allow_unrelated, signature=args.signature)
        try:
            comparison = _compare(args)
        except RuntimeFailure as e:  # the runtime refuses the model: the audit usually says why
            failure = e
    report = build_report(args.float_model, args.quant_model, comparison, worst_n=args.worst,
                          comparison_error=None if failure is None else str(failure), signature=args.signature)  # fmt: skip
    csv, me = (None, None) if failure else (args.csv, args.model_explorer)
    written = write_report(report, comparison, html=args.html, json_path=args.json, csv=csv, model_explorer=me)
    if args.json != "-":
        c = report["audit"]["counts"]
        print(f"audit: {c['error']} error(s), {c['warning']} warning(s), {c['info']} info")
        for path in written:
            print(f"wrote {path}")
    if failure is not None:
        skipped = " (CSV / Model Explorer files not written)" if args.csv or args.model_explorer else ""
        print(f"tflite-inspector report: comparison not run{skipped}: {failure}", file=sys.stderr)
    code = 0
    if args.fail_on and _gate([Finding.from_json(f) for f in report["audit"]["findings"]], args.fail_on):
        code = 1
    if args.fail_on_accuracy_drop is not None and comparison is not None:
        code = max(code, accuracy_gate(comparison.task(), args.fail_on_accuracy_drop, args.inputs))
    if note and failure is None:
        print(note, file=sys.stderr)
    if code:
        return code
    return 2 if failure is not None else 0


def _run_keras(args: argparse.Namespace) -> int:
    """FLOAT is a Keras / SavedModel model: the Keras comparison, with the model card, weight
    histograms and op math of its float twin (made once, cached) beside B."""
    from inspector.cli.gates import accuracy_gate
    from inspector.cli.pair_guard import guarded_keras_pair
    from inspector.core.keras.compare_keras import compare_keras_in_worker
    from inspector.core.keras.for_view import open_for_view
    from inspector.core.keras.info import keras_info
    from inspector.core.review.audit import Finding
    from inspector.core.review.report import build_report, write_report
    from inspector.core.review.report_keras import keras_report
    from inspector.core.runtime.worker import run_isolated

    opts = CompareOptions(samples=sample_settings(args), runtime=args.runtime, isolated=args.isolated, signature=args.signature)
    check = guarded_keras_pair(
        args.float_model, args.quant_model, "report", allow_unrelated=args.allow_unrelated, signature=args.signature
    )
    task = verbose_task(args)
    kc = compare_keras_in_worker(args.float_model, args.quant_model, opts, task=task)
    kc = dataclasses.replace(kc, result=dataclasses.replace(kc.result, pair_check=check))
    twin = run_isolated(open_for_view, args.float_model, task=task, step="making the float twin", models=(args.float_model,))["float_twin"]
    info = run_isolated(keras_info, args.float_model, args.quant_model, step="reading the QAT ranges", models=(args.float_model,))
    report = build_report(twin, args.quant_model, kc.result, worst_n=args.worst)
    report["comparison"] = kc.to_json()
    keras_report(report, args.float_model, twin, kc.float_info, info)  # titled and sourced by the Keras model
    written = write_report(report, kc.result, html=args.html, json_path=args.json, csv=args.csv, model_explorer=args.model_explorer)
    if args.json != "-":
        c = report["audit"]["counts"]
        print(f"audit: {c['error']} error(s), {c['warning']} warning(s), {c['info']} info")
        for path in written:
            print(f"wrote {path}")
    code = 0
    if args.fail_on and _gate([Finding.from_json(f) for f in report["audit"]["findings"]], args.fail_on):
        code = 1
    if args.fail_on_accuracy_drop is not None:
        code = max(code, accuracy_gate(kc.result.task(), args.fail_on_accuracy_drop, args.inputs))
    return code


def _gate(findings: list, severity: str) -> int:
    from inspector.core.review.audit import SEVERITIES, at_or_above

    bad = at_or_above(findings, severity)
    if not bad:
        return 0
    worse = "" if severity == SEVERITIES[0] else " or worse"
    print(f"FAIL: {len(bad)} finding(s) of severity {severity}{worse}:", file=sys.stderr)
    for f in bad:
        where = f"op {f.op_index} {f.op_type}" if f.op_index is not None else "model"
        tensor = f" tensor '{f.tensor_name}'" if f.tensor_name else ""
        print(f"  {f.severity} [{f.rule}] {where}{tensor}: {f.message}", file=sys.stderr)
    return 1
