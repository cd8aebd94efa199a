"""`tflite-inspector [gui] [FLOAT] [QUANT]`: open the desktop app."""

from __future__ import annotations

import argparse


def add_parser(sub) -> None:
    p = sub.add_parser("gui", help="open the desktop app (default)")
    p.add_argument("float_model", nargs="?", help="float .tflite (model A); a .litertlm bundle lists its sections, BUNDLE.litertlm#N opens one")
    p.add_argument("quant_model", nargs="?", help="quantized .tflite (model B); also BUNDLE.litertlm[#N]")


def run(args: argparse.Namespace) -> int:
    from inspector.gui.app import run_app

    return run_app(args.float_model, args.quant_model)
