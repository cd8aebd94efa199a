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

from inspector.core.errors import InspectorError

EXIT_OK = 0
EXIT_THRESHOLD = 1
EXIT_BAD_INPUT = 2

EXIT_CODES = """exit codes: 0 success; 1 a threshold was crossed (--fail-below-sqnr, --fail-on,
  --fail-on-accuracy-drop, suggest short of its target); 2 bad input or an output that cannot be
  written (one line on stderr naming the file and the problem)."""
OUTPUTS = """outputs: '-' is standard output; every output is checked before any work and a command
  writes all its outputs or none; an output's folder must exist (a missing folder is an error,
  never created; extract --out DIR and convert --out-dir DIR create DIR itself)."""

# Each subcommand module exposes `add_parser(subparsers)` and `run(args) -> int`.
_SUBCOMMANDS = ("gui", "info", "compare", "compare-runtimes", "requantize", "suggest", "report", "extract", "convert", "graph")


class _Version(argparse.Action):
    """`--version`: the version is looked up when asked for (reading it costs every command 40 ms)."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):  # noqa: A002
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from inspector import __version__

        parser._print_message(f"tflite-inspector {__version__}\n", sys.stdout)  # where argparse's own action prints it
        parser.exit()


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse exits 2 already; keep it to one line
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message}\n")


def _modules(names: Sequence[str] = _SUBCOMMANDS):
    import importlib

    mods = {}
    for name in names:
        module = f"inspector.cli.{name.replace('-', '_')}_cmd"
        try:
            mods[name] = importlib.import_module(module)
        except ModuleNotFoundError as e:
            if e.name != module:
                raise
    return mods


def build_parser(mods: dict | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or of those of `mods` (`_modules(names)`: a command line
    naming its command builds that one only, without importing the others' modules)."""
    from inspector.paths import example_hint

    p = _Parser(prog="tflite-inspector", description="Compare a float .tflite with its quantized twin.",
                epilog=f"{example_hint()}\n\n{EXIT_CODES}\n{OUTPUTS}", formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    p.add_argument("--version", action=_Version, help="show program's version number and exit")
    p.add_argument("--self-test", action="store_true", help="open the bundled example, run a short check, exit 0 if all works")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for mod in (_modules() if mods is None else mods).values():
        mod.add_parser(sub)
    for cmd in sub.choices.values():  # every subcommand's --help ends with the same two paragraphs
        cmd.formatter_class = argparse.RawDescriptionHelpFormatter
        cmd.epilog = f"{cmd.epilog}\n\n" if cmd.epilog else ""
        cmd.epilog += f"{EXIT_CODES}\n{OUTPUTS}"
    return p


# Arguments that name input files: no output of the command may overwrite them.
_INPUT_ARGS = ("float_model", "quant_model", "model", "quant", "recipe", "inputs", "calibrate_from", "plan", "tflite")
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a reader that went away


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; a reader that closes the pipe early (`info m.tflite | head`) ends it
    quietly instead of with a BrokenPipeError traceback (the recipe from Python's signal docs)."""
    import atexit
    import os

    atexit.unregister(_end_helper_processes)
    atexit.register(_end_helper_processes)  # runs before multiprocessing's own exit handler
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


# Commands (and their model arguments) that read .tflite models only: a Keras model there is told
# how to make its twins, as `graph` does, before any model is parsed.
_TFLITE_ONLY = {
    "requantize": ("model", "quant", "calibrate_from"),
    "suggest": ("float_model", "quant_model"),
    "extract": ("quant_model", "float_model"),
    "compare-runtimes": ("quant_model",),
    "graph": ("float_model", "quant_model"),
}
TWINS_FIRST = "make the TFLite twins first (tflite-inspector convert MODEL --out-dir DIR)"


def _check_model_args(args: argparse.Namespace) -> None:
    from inspector.core.errors import InputError
    from inspector.core.keras.detect import check_model_input, is_keras_path

    if args.command == "gui":  # the app reports a file it cannot open in its window
        return
    for name in _TFLITE_ONLY.get(args.command, ()):
        value = getattr(args, name, None)
        if isinstance(value, str) and is_keras_path(value):
            verb = "draws" if args.command == "graph" else "reads"
            raise InputError(f"{args.command} {verb} .tflite models: {TWINS_FIRST}", value)
    for name in _MODEL_ARGS:
        value = getattr(args, name, None)
        if isinstance(value, str):
            check_model_input(value)


# Arguments that name outputs, with the option that names them; `extract --out` and
# `convert --out-dir` name a folder the command fills.
_OUTPUT_ARGS = {"out": "--out", "out_dir": "--out-dir", "json": "--json", "csv": "--csv", "html": "--html",
                "model_explorer": "--model-explorer", "svg": "--svg", "save_plan": "--save-plan",
                "save_recipe": "--save-recipe"}  # fmt: skip
_FOLDER_OUTPUTS = {("extract", "out"), ("convert", "out_dir")}


def _output_targets(args: argparse.Namespace) -> list:
    from inspector.core.writing import Target

    return [Target(value, flag, (args.command, name) in _FOLDER_OUTPUTS)
            for name, flag in _OUTPUT_ARGS.items() if isinstance(value := getattr(args, name, None), str)]  # fmt: skip


def _exit_now(code: int) -> int:
    """End the self-test process with `code` once its report is out. The self-test loads Qt,
    pyqtgraph, TensorFlow-free LiteRT and a worker process into one short-lived process; their
    teardown at interpreter exit is not part of what it checks and has crashed under load
    (SIGSEGV after "6 passed"), so the worker is closed and the process ends here."""
    _end_helper_processes()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _end_helper_processes() -> None:
    """No process of the command outlives it: the worker is closed, then multiprocessing's fork
    server and resource tracker are stopped and waited for (left to themselves they end a moment
    after the shell prompt is back, and a worker the fork server was still starting printed
    LiteRT's start-up line under the prompt)."""
    if "inspector.core.runtime.worker" not in sys.modules:
        return  # no worker was ever used (info, graph of one model, a refused command)
    from inspector.core.runtime.worker import close_default_worker

    close_default_worker()
    import multiprocessing.forkserver as forkserver
    import multiprocessing.resource_tracker as resource_tracker

    for helper in (getattr(forkserver, "_forkserver", None), getattr(resource_tracker, "_resource_tracker", None)):
        stop = getattr(helper, "_stop", None)  # private, but what the standard library's tests use
        if stop is not None:
            try:
                stop()
            except Exception:  # noqa: BLE001 - an already stopped helper is the goal
                pass


_ran: list[str] = []  # the command `main` ran (`exit_process` reads it)


def exit_process(code: int) -> None:
    """End `python -m inspector` with `code` once `main` returned. A command (not the GUI) has
    written, closed and flushed every output by then; tearing the interpreter down (numpy, LiteRT,
    the comparison: 0.15-0.2 s of every command) adds nothing to them, so the worker is closed
    and the process ends here. The GUI ends through the interpreter's normal exit."""
    if not _ran or _ran[-1] == "gui":
        sys.exit(code)
    _exit_now(code)


_own_process: list[bool] = []  # `run` started this process: it is the command's alone


def run() -> None:
    """The `tflite-inspector` script and `python -m inspector`: `main`, then `exit_process`."""
    _own_process.append(True)
    exit_process(main())


def owns_process() -> bool:
    """Whether this process was started for the command (`run`), not a caller of `main` (a test,
    an embedding program): only then may a command fork it (its worker, `fork_worker`)."""
    return bool(_own_process)


# Commands that run interpreters in the worker, with the argument that must be given for them to
# run any (None: always): their worker is forked before they start (`fork_worker`).
_WORKER_COMMANDS: dict[str, str | None] = {
    "compare": None, "report": "quant_model", "graph": "quant_model", "suggest": None, "requantize": None,
    "compare-runtimes": None, "extract": None, "gui": "quant_model",
}  # fmt: skip
# What a command's worker runs beyond `worker.PRELOAD`, imported before the fork too: the command
# imports it anyway to name the job, and the worker then need not import it again when the job
# arrives (`compare`: blame's modules, 30-50 ms, were imported by both processes one after the other).
_WORKER_PRELOAD: dict[str, tuple[str, ...]] = {"compare": ("inspector.core.requantize.blame",)}


def fork_worker(args: argparse.Namespace) -> None:
    """Start the worker of a command that runs interpreters (`_WORKER_COMMANDS`) now, by forking
    this process while it has one thread, with what the worker runs (numpy, LiteRT, the
    comparison) imported here once: it starts in milliseconds and is ready while the command
    checks its pair and reads its models (with the default start method, a fresh interpreter's
    start and imports: a second on the critical path). Only in a process `run` started
    (`owns_process`); called once the outputs are checked, so a refused command starts none.
    The GUI opened on a pair forks it before Qt is imported (`gui_cmd.run`): the worker starts
    while Qt starts; a later restart of it comes from the fork server (a Qt process never forks)."""
    if args.command not in _WORKER_COMMANDS or not owns_process():
        return
    needed = _WORKER_COMMANDS[args.command]
    if needed is not None and not getattr(args, needed, None):
        return  # one model drawn or audited: no interpreter runs
    from inspector.core.runtime.worker import PRELOAD, start_default_worker

    extra = _WORKER_PRELOAD.get(args.command, ())
    if extra and args.command == "compare":
        from inspector.core.keras.detect import is_keras_path

        extra = () if is_keras_path(args.float_model) else extra  # a Keras comparison's worker runs another job
    start_default_worker(fork=True, preload=(*PRELOAD, *extra))


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # A command line naming its command builds that command's parser only (the other commands'
    # modules: 50-60 ms of CPU before the worker starts); the top-level options and help, all.
    mods = _modules(argv[:1]) if argv and argv[0] in _SUBCOMMANDS else {}
    if not mods:
        mods = _modules()
    # Default subcommand is the GUI: `tflite-inspector [FLOAT] [QUANT]`.
    if not argv or (argv[0] not in mods and not argv[0].startswith("-")):
        argv = ["gui", *argv]
        if "gui" not in mods:
            mods = _modules()
    parser = build_parser(mods)
    args = parser.parse_args(argv)
    if args.self_test:
        from inspector.selftest import run_self_test

        return _exit_now(run_self_test())
    if args.command is None:
        args = parser.parse_args(["gui"])
    _ran.append(args.command)
    from inspector.core.writing import outputs, protect_input

    protect_input(*(getattr(args, name, None) for name in _INPUT_ARGS))
    try:
        _check_model_args(args)
        if args.command == "gui":  # the app writes as the user saves, not at its end
            return int(mods[args.command].run(args) or 0)
        with outputs(_output_targets(args)):  # every destination checked first; all written or none
            fork_worker(args)
            return int(mods[args.command].run(args) or 0)
    except InspectorError as e:
        print(f"tflite-inspector {args.command}: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
