"""`tflite-inspector convert MODEL --out-dir DIR [--inputs X | --samples N] [--quantize MODE ...] [--json PATH|-]`.

Makes a Keras / SavedModel model's TFLite twins with TF's converter, in the worker process
(TensorFlow is imported there only): the float twin and one quantized twin per mode.
"""

from __future__ import annotations

import argparse
import contextlib

from inspector.cli.sample_flags import add_sample_flags, sample_settings
from inspector.cli.verbose import add_verbose_flag, verbose_task
from inspector.core.keras.detect import MODES


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="make the TFLite twins (float and quantized) of a Keras or SavedModel model")
    p.add_argument("model", metavar="MODEL", help="a .keras or .h5 file or a SavedModel folder (QAT models too)")
    p.add_argument("--out-dir", required=True, metavar="DIR", help="folder for the twins and their provenance JSON "
                   "(created when missing, inside an existing folder)")
    add_sample_flags(p, what="representative samples", exclusive=True)
    p.add_argument("--quantize", nargs="+", choices=MODES, default=["int8"], metavar="MODE",
                   help=f"quantized twins to make: {', '.join(MODES)} (default int8; a QAT model's int8 twins use its own ranges)")  # fmt: skip
    p.add_argument("--json", metavar="PATH", help="write {float, quantized, provenance} to PATH ('-' for standard output)")
    add_verbose_flag(p)


def run(args: argparse.Namespace) -> int:
    # Imported here, not at the top: building the parser for any command stays light.
    from inspector.core.errors import InputError
    from inspector.core.keras.convert import make_twins
    from inspector.core.keras.detect import keras_format
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.writing import active_outputs, outputs, write_json_output

    if keras_format(args.model) is None:
        raise InputError("not a Keras model (.keras, .h5) or a SavedModel folder", args.model)
    task = verbose_task(args)
    # The worker writes the twins into a staging folder inside DIR; they take their names with
    # the command's other outputs, or are removed when a later step fails (all or none).
    with contextlib.ExitStack() as stack:
        tx = active_outputs() or stack.enter_context(outputs())
        staging = tx.staging_folder(args.out_dir)
        result = run_isolated(
            make_twins, args.model, str(staging), list(args.quantize), sample_settings(args), task=task,
            kwargs={"named_in": args.out_dir}, step="converting with TensorFlow", models=(args.model,),
        )  # fmt: skip
        tx.adopt_folder(staging, args.out_dir)
    if task is not None:
        task.done()
    if args.json:
        write_json_output(result, args.json)
    if args.json != "-":
        print(f"float: {result['float']}")
        for mode, path in result["quantized"].items():
            print(f"{mode}: {path}")
    return 0
