"""`tflite-inspector info MODEL [--json PATH|-]`."""

from __future__ import annotations

import argparse

from inspector.core.model import load_model
from inspector.core.summary import model_summary_json, model_summary_text
from inspector.core.writing import write_json_output


def add_parser(sub) -> None:
    p = sub.add_parser("info", help="summarize a .tflite model: tensors, quantization, ops")
    p.add_argument("model", help="path to a .tflite file")
    p.add_argument("--json", metavar="PATH", help="write JSON to PATH ('-' for standard output)")


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    if args.json:
        write_json_output(model_summary_json(model), args.json)
    else:
        print(model_summary_text(model))
    return 0
