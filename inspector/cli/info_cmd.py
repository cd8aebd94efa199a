"""`tflite-inspector info MODEL [--json PATH|-]`."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    from inspector.paths import example_hint

    p = sub.add_parser("info", help="summarize a .tflite model (tensors, quantization, ops) or list a .litertlm bundle's sections",
                       epilog=example_hint(), formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("model", help="a .tflite file, a .litertlm bundle (lists its sections) or a section BUNDLE.litertlm#N")
    p.add_argument("--json", metavar="PATH", help="write JSON to PATH ('-' for standard output)")
    p.add_argument("--tflite", metavar="PATH", help="Keras QAT models: pair the QAT ranges with this TFLite model "
                   "(default: the int8 twin converted from the QAT ranges)")  # fmt: skip
    p.add_argument(
        "--allow-unrelated",
        action="store_true",
        help="with --tflite: pair the ranges even when the weights say it is not an export of MODEL",
    )


def run(args: argparse.Namespace) -> int:
    from inspector.core.keras.detect import is_keras_path

    if is_keras_path(args.model):
        return _run_keras(args)
    from inspector.core.review.model_summary import (
        bundle_summary_text,
        model_summary_json,
        model_summary_text,
    )
    from inspector.core.tflite.litertlm import is_bundle_file, read_bundle
    from inspector.core.tflite.model import load_model
    from inspector.core.writing import write_json_output

    if is_bundle_file(args.model):
        bundle = read_bundle(args.model)
        if args.json:
            write_json_output(bundle.to_json(), args.json)
        else:
            print(bundle_summary_text(bundle))
        return 0
    model = load_model(args.model)
    if args.json:
        write_json_output(model_summary_json(model), args.json)
    else:
        print(model_summary_text(model))
    return 0


def _run_keras(args: argparse.Namespace) -> int:
    """A Keras / SavedModel model: its layers and the QAT section (`"qat"`), from the worker."""
    from inspector.core.keras.info import keras_info, keras_info_text
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.writing import write_json_output

    if args.tflite:  # a TFLite model that is not an export of MODEL: its scales say nothing about MODEL's ranges
        from inspector.cli.pair_guard import guarded_keras_pair

        guarded_keras_pair(args.model, args.tflite, "info", allow_unrelated=args.allow_unrelated)
    info = run_isolated(keras_info, args.model, args.tflite, step="reading the Keras model", models=(args.model,))
    if args.json:
        write_json_output(info, args.json)
    else:
        print(keras_info_text(info))
    return 0
