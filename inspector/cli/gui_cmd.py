"""`tflite-inspector [gui] [FLOAT] [QUANT]`: open the desktop app.

Before Qt starts: a QT_QPA_PLATFORM naming no plugin, no display or a display no X server answers
is one line (exit 2), missing xcb libraries are named with their `apt-get install` line (exit 2,
`cli.qt_platform`); with no model given, a line says how to open the bundled example pair.
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub) -> None:
    p = sub.add_parser("gui", help="open the desktop app (default)")
    p.add_argument("float_model", nargs="?", help="the float model A: a .tflite, a Keras .keras / .h5 file or a SavedModel folder; "
                   "a .litertlm bundle lists its sections, BUNDLE.litertlm#N opens one")
    p.add_argument("quant_model", nargs="?", help="quantized .tflite (model B); also BUNDLE.litertlm[#N]")


def run(args: argparse.Namespace) -> int:
    from inspector.cli import fork_worker

    fork_worker(args)  # a pair: its worker starts now, before Qt is loaded, and is ready for the first comparison
    from inspector.cli.qt_platform import (
        display_problem,
        platform_problem,
        unreachable_display_problem,
        xcb_problem,
    )

    problem = platform_problem() or display_problem() or unreachable_display_problem() or xcb_problem()
    if problem is not None:
        print(problem, file=sys.stderr)
        return 2
    if args.float_model is None and args.quant_model is None:
        from inspector.paths import example_hint

        print(example_hint(), file=sys.stderr)
    from inspector.gui.app import run_app

    return run_app(args.float_model, args.quant_model)
