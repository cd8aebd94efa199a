"""`tflite-inspector info MODEL [--json PATH|-]`."""

from __future__ import annotations

import argparse

from inspector.cli.verbose import add_verbose_flag, verbose_task


def add_parser(sub) -> None:
    from inspector.paths import example_hint

    p = sub.add_parser("info", help="summarize a .tflite model (tensors, quantization, ops), a Keras model (.keras, .h5, a SavedModel "
                       "folder: layers, QAT ranges -> scales) or list a .litertlm bundle's sections",
                       epilog=example_hint(), formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("model", help="a .tflite file, a Keras model (.keras, .h5 or a SavedModel folder; needs the [tensorflow] extra), "
                   "a .litertlm bundle (lists its sections) or a section BUNDLE.litertlm#N")
    p.add_argument("--json", metavar="PATH", help="also write JSON to PATH ('-': JSON alone on standard output, no text)")
    p.add_argument("--tflite", metavar="PATH", help="Keras QAT models: pair the QAT ranges with this TFLite model "
                   "(default: the int8 twin converted from the QAT ranges, kept in the twin cache)")  # fmt: skip
    p.add_argument(
        "--allow-unrelated",
        action="store_true",
        help="with --tflite: pair the ranges even when the weights say it is not an export of MODEL",
    )
    add_verbose_flag(p)


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
        if args.json != "-":
            print(bundle_summary_text(bundle))
        return 0
    model = load_model(args.model)
    if args.json:
        write_json_output(model_summary_json(model), args.json)
    if args.json != "-":
        print(model_summary_text(model))
    return 0


def _run_keras(args: argparse.Namespace) -> int:
    """A Keras / SavedModel model: its layers and the QAT section (`"qat"`), from the worker."""
    from inspector.core.keras.for_view import cached_info_for_cli, info_for_cli
    from inspector.core.keras.info import keras_info_text
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.writing import write_json_output

    if args.tflite:  # a TFLite model that is not an export of MODEL: its scales say nothing about MODEL's ranges
        from inspector.cli.pair_guard import guarded_keras_pair

        guarded_keras_pair(args.model, args.tflite, "info", allow_unrelated=args.allow_unrelated)
    task = verbose_task(args)
    info = None
    if args.tflite is None:  # converted before: from the twin cache, without a worker or TensorFlow
        if task is not None:
            task.report(0.0, "looking for converted twins in the cache")
        info = cached_info_for_cli(args.model)
    if info is None:
        info = run_isolated(info_for_cli, args.model, args.tflite, task=task, step="reading the Keras model", models=(args.model,))
    if task is not None:
        task.done()
    if args.json:
        write_json_output(info, args.json)
    if args.json != "-":
        print(keras_info_text(info))
    return 0
