"""`tflite-inspector compare FLOAT QUANT`: layerwise error of a quantized model against its float twin.

Prints a table (unless `--json -`), writes JSON/CSV atomically, and with `--fail-below-sqnr DB`
exits 1 when any model output's SQNR is below DB (a release gate), naming the outputs and the
worst layers.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import math
import sys
import threading

from inspector.cli.sample_flags import (
    add_blame_flag,
    add_isolated_flag,
    add_sample_flags,
    sample_settings,
    use_example_inputs,
)
from inspector.cli.verbose import add_verbose_flag, verbose_task
from inspector.core.compare.options import CompareOptions


def add_parser(sub) -> None:
    from inspector.paths import example_hint

    p = sub.add_parser("compare", help="layerwise error of a quantized model against its float twin",
                       epilog=example_hint(), formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("float_model", metavar="FLOAT", help="the float model: a .tflite, or a Keras .keras / .h5 file or a SavedModel folder "
                   "(needs the [tensorflow] extra; its TFLite twin is made and compared)")
    p.add_argument("quant_model", metavar="QUANT", help="quantized .tflite")
    add_sample_flags(p, stateful=True)
    p.add_argument("--runtime", choices=("optimized", "reference"), default=CompareOptions.runtime,
                   help="optimized: XNNPACK as deployed (default); reference: builtin kernels, no delegates")
    add_isolated_flag(p)
    p.add_argument("--signature", metavar="KEY",
                   help="compare this signature (its subgraph, inputs and outputs; default: subgraph 0)")
    p.add_argument("--json", metavar="PATH", help="write JSON to PATH ('-' for standard output, no table)")
    p.add_argument("--csv", metavar="PATH", help="write one CSV row per layer to PATH")
    p.add_argument("--fail-below-sqnr", type=float, metavar="DB",
                   help="exit 1 when a model output's SQNR is below DB: the whole output's, or that of its worst "
                        "slice (an output concatenated from several inputs) or channel (last axis; near-dead "
                        "channels under 1/4 of the median channel's range are not counted; a classifier's "
                        "channels are its classes, not gated one by one)")
    p.add_argument("--task", choices=("auto", "classification", "regression", "other"), default="auto",
                   help="task metrics of the outputs: classification (accuracy, agreement) or regression "
                        "(MAE, RMSE, max error; 'other' is its old name); auto: classification where a "
                        "SOFTMAX/LOGISTIC produces the output or labels/class names are given, else regression")
    p.add_argument("--fail-on-accuracy-drop", type=float, metavar="PCT",
                   help="exit 1 when quantized accuracy is more than PCT percentage points below float "
                        "(needs labelled inputs: an image folder with class subfolders or an .npz with 'labels')")
    add_blame_flag(p)
    add_verbose_flag(p)  # the Keras route's steps (loading TensorFlow, the model, comparing)
    from inspector.cli.pair_flag import add_allow_unrelated_flag

    add_allow_unrelated_flag(p)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: building the parser for any command stays light. The worker
    # was forked before (`cli.fork_worker`), with what it runs imported once: it compares while
    # this process checks the pair, whose imports are then already done.
    from inspector.core.keras.detect import is_keras_path

    note = use_example_inputs(args, "compare")
    kind = None
    if args.task != "auto":
        from inspector.core.compare.task_kind import normalized_kind

        kind = normalized_kind(args.task)
    opts = CompareOptions(
        samples=sample_settings(args),
        runtime=args.runtime,
        isolated=args.isolated,
        task_kind=kind,
        signature=args.signature,
    )
    if is_keras_path(args.float_model):
        return _run_keras(args, opts)
    from inspector.core.requantize.blame import compare_blame_in_worker

    compare_in_worker = functools.partial(compare_blame_in_worker, blame=args.blame and args.isolated)  # the root causes
    started = _start_comparison(args, opts, compare_in_worker)
    from inspector.cli.pair_guard import guarded_pair

    notes: dict = {}
    float_path, quant_path, check, result = _checked_comparison(args, opts, guarded_pair, compare_in_worker, started,
                                                                meanwhile=lambda q: notes.update(_before_the_result(args, q)))  # fmt: skip
    if check.swapped:
        result = dataclasses.replace(result, swapped=True, pair_check=check)
    lines = ((f"reference: {result.reference}",) if result.reference else ()) + notes["reference_lines"]
    code = _emit(args, result, result.to_json(), lines)
    if note:
        print(note, file=sys.stderr)
    return code


def _before_the_result(args: argparse.Namespace, quant_path: str) -> dict:
    """What the output needs besides the result, done while the worker compares (this process
    waits for it otherwise): B's equalization notes (B parsed once more) and the imports of
    `_emit` (the table, CSV, task and gate code: 0.1-0.3 s that followed the worker's end)."""
    from inspector.cli import gates  # noqa: F401 - imported now, used by _emit
    from inspector.core.compare import export, isolated_work, task_text  # noqa: F401 - as above
    from inspector.core.compare.equalized import reference_lines

    return {"reference_lines": tuple(reference_lines(quant_path, args.signature))}


def _emit(args: argparse.Namespace, result, json_obj: dict, extra: tuple[str, ...] = ()) -> int:
    """Write the JSON/CSV asked for, print the table, the task blocks and `extra` lines (unless
    `--json -`), and apply the gates: the exit code."""
    from inspector.cli.gates import accuracy_gate
    from inspector.core.compare.export import text_table, to_csv_text
    from inspector.core.compare.task_text import task_summary
    from inspector.core.writing import atomic_write_text, write_json_output

    task = result.task()
    if args.json:
        write_json_output(json_obj, args.json)
    if args.csv:
        atomic_write_text(args.csv, to_csv_text(result))
    if args.json != "-":
        print(text_table(result))
        if task is not None:
            print(task_summary(task))
            for k in range(1, len(result.outputs)):  # the other outputs: one block each
                other = result.task(k)
                if other is not None:
                    print(f"output '{result.outputs[k].name}': " + task_summary(other, worst=0))
        for line in extra:
            print(line)
    from inspector.core.compare.isolated_work import isolated_refusal

    if (refusal := isolated_refusal(result)) is not None:
        print(f"warning: {refusal}; compared without each layer's own error", file=sys.stderr)
    code = 0
    if args.fail_below_sqnr is not None:
        code = max(code, _gate(result, args.fail_below_sqnr))
    if args.fail_on_accuracy_drop is not None:
        code = max(code, accuracy_gate(task, args.fail_on_accuracy_drop, args.inputs))
    return code


def _run_keras(args: argparse.Namespace, opts: CompareOptions) -> int:
    """FLOAT is a Keras / SavedModel model (`inspector.core.keras.compare_keras`): the same
    table, JSON schema (with "float": {"format": "keras", ...} and "first_departure"), CSV and gates."""
    from inspector.cli.pair_guard import guarded_keras_pair
    from inspector.core.keras.compare_keras import compare_keras_in_worker

    if opts.samples.carry_state:
        from inspector.core.errors import InputError

        raise InputError("--stateful compares two .tflite models (a Keras model runs every sample on its own)")

    check = guarded_keras_pair(
        args.float_model, args.quant_model, "compare", allow_unrelated=args.allow_unrelated, signature=args.signature
    )
    kc = compare_keras_in_worker(args.float_model, args.quant_model, opts, task=verbose_task(args))
    kc = dataclasses.replace(kc, result=dataclasses.replace(kc.result, pair_check=check))
    extra = [kc.reference_line()]
    fd = kc.first_departure
    if fd is not None:
        extra.append(f"first departure from the QAT simulation: op {fd['op_index']} {fd['op_type']} (layer '{fd['keras_layer']}'), "
                     f"{fd['steps']:.2f} int8 steps")  # fmt: skip
    extra += [f"unmatched Keras layer '{u['keras_layer']}' ({u['keras_class']}): {u['reason']}" for u in kc.unmatched_layers]
    return _emit(args, kc.result, kc.to_json(), tuple(extra))


def _start_comparison(args: argparse.Namespace, opts, compare_in_worker) -> tuple:
    """(task, box, thread): the comparison running in the worker, unchecked, from now on."""
    from inspector.core.progress import TaskState

    task, box = TaskState(), {}

    def work() -> None:
        try:
            box["result"] = compare_in_worker(args.float_model, args.quant_model, opts, task=task, check=False)
        except BaseException as e:  # noqa: BLE001 - re-raised below, on this thread
            box["error"] = e

    th = threading.Thread(target=work, name="inspector-compare", daemon=True)
    th.start()
    return task, box, th


def _checked_comparison(args: argparse.Namespace, opts, guarded_pair, compare_in_worker, started: tuple | None = None,
                        meanwhile=None):  # fmt: skip
    """(float, quant, pair check, result). The worker starts, builds both interpreters and runs
    the samples while this process checks the pair: the check is off the critical path. An
    unrelated pair (or unreadable file) cancels the comparison; a swapped one runs it again the
    right way round. `started`: `_start_comparison`'s, when the caller started it earlier;
    `meanwhile(quant_path)`: more of this process's work, done before it waits for the result."""
    task, box, th = started if started is not None else _start_comparison(args, opts, compare_in_worker)
    try:
        float_path, quant_path, check = guarded_pair(args.float_model, args.quant_model, "compare",
                                                     allow_unrelated=args.allow_unrelated, signature=args.signature)  # fmt: skip
    except BaseException:
        task.cancel()
        th.join(10.0)
        raise
    if check.swapped:
        task.cancel()
        th.join()
        if meanwhile is not None:
            meanwhile(quant_path)
        return float_path, quant_path, check, compare_in_worker(float_path, quant_path, opts, pair_check=check)
    if meanwhile is not None:
        try:
            meanwhile(quant_path)
        except BaseException:
            task.cancel()
            th.join(10.0)
            raise
    th.join()
    if "error" in box:
        raise box["error"]
    return float_path, quant_path, check, dataclasses.replace(box["result"], pair_check=check)


def _gate(result, threshold: float) -> int:
    from inspector.core.compare.export import worst_layers
    from inspector.core.compare.inside import gate_floor

    def classes(k: int) -> bool:  # a classifier's channels are its classes: the whole output and slices gate it
        kind = result.task_kind or (result.output_kinds[k][0] if k < len(result.output_kinds) else None)
        return kind == "classification"

    floors = [(o, *gate_floor(o.metrics.sqnr_db, None if classes(k) else o.channels, o.slices))
              for k, o in enumerate(result.outputs)]
    bad = [(o, v, what) for o, v, what in floors if not math.isnan(v) and v < threshold]
    if not bad:
        return 0
    for o, v, what in bad:
        whole = "" if what == "SQNR" else f" (the whole output reads {o.metrics.sqnr_db:.2f} dB)"
        print(f"FAIL: output '{o.name}' {what} {v:.2f} dB is below {threshold:g} dB{whole}", file=sys.stderr)
    worst = ", ".join(f"op {w.op_index} {w.op_type} '{w.tensor_name}' ({w.metrics.sqnr_db:.2f} dB)" for w in worst_layers(result, 3))
    of = f" of signature '{result.signature}'" if result.signature is not None else ""
    print(f"worst layers{of} (accumulated SQNR): {worst}", file=sys.stderr)
    if result.isolated:
        iso = worst_layers(result, 3, isolated=True)
        text = ", ".join(
            f"op {w.op_index} {w.op_type} ({w.isolated.sqnr_db:.2f} dB)" for w in iso if w.isolated is not None
        )
        print(f"worst layers (isolated SQNR): {text}", file=sys.stderr)
    return 1
