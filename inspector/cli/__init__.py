"""Command line front end: `tflite-inspector [gui|info|compare|compare-runtimes|requantize|suggest|report|extract|convert|graph] ...`.

Exit codes for every subcommand: 0 success, 2 bad input (one line on stderr naming the file
and the problem), 1 a threshold was crossed (gates for CI pipelines).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from inspector import __version__
from inspector.core.errors import InspectorError

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2

# Each subcommand module exposes `add_parser(subparsers)` and `run(args) -> int`.
_SUBCOMMANDS = ("gui", "info", "compare", "compare-runtimes", "requantize", "suggest", "report", "extract", "convert", "graph")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 already; keep it to one line
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _modules():
    import importlib

    mods = {}
    for name in _SUBCOMMANDS:
        module = f"inspector.cli.{name.replace('-', '_')}_cmd"
        try:
            mods[name] = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
    return mods


def build_parser() -> argparse.ArgumentParser:
    from inspector.paths import example_hint

    p = _Parser(prog="tflite-inspector", description="Compare a float .tflite with its quantized twin.",
                epilog=example_hint(), formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--version", action="version", version=f"tflite-inspector {__version__}")
    p.add_argument("--self-test", action="store_true", help="open the bundled example, run a short check, exit 0 if all works")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for mod in _modules().values():
        mod.add_parser(sub)
    return p


# Arguments that name input files: no output of the command may overwrite them.
_INPUT_ARGS = ("float_model", "quant_model", "model", "quant", "recipe", "inputs", "calibrate_from", "plan", "tflite")
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a reader that closes the pipe early (`info m.tflite | head`) ends it
    quietly instead of with a BrokenPipeError traceback (the recipe from Python's signal docs)."""
    import os

    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not raise again
        return EXIT_BROKEN_PIPE


# Arguments that name a model: a Keras file that does not exist or a folder that is not a
# SavedModel is one line before any worker or TensorFlow starts.
_MODEL_ARGS = ("float_model", "quant_model", "model")


def _check_model_args(args: argparse.Namespace) -> None:
    from inspector.core.keras.detect import check_model_input

    if args.command == "gui":  # the app reports a file it cannot open in its window
        return
    for name in _MODEL_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            check_model_input(value)


def _exit_now(code: int) -> int:
    """End the self-test process with `code` once its report is out. The self-test loads Qt,
    pyqtgraph, TensorFlow-free LiteRT and a worker process into one short-lived process; their
    teardown at interpreter exit is not part of what it checks and has crashed under load
    (SIGSEGV after "6 passed"), so the worker is closed and the process ends here."""
    from inspector.core.runtime.worker import close_default_worker

    close_default_worker()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    mods = _modules()
    # Default subcommand is the GUI: `tflite-inspector [FLOAT] [QUANT]`.
    if not argv or (argv[0] not in mods and not argv[0].startswith("-")):
        argv = ["gui", *argv]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.self_test:
        from inspector.selftest import run_self_test

        return _exit_now(run_self_test())
    if args.command is None:
        args = parser.parse_args(["gui"])
    from inspector.core.writing import protect_input

    protect_input(*(getattr(args, name, None) for name in _INPUT_ARGS))
    try:
        _check_model_args(args)
        return int(mods[args.command].run(args) or 0)
    except InspectorError as e:
        print(f"tflite-inspector {args.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
