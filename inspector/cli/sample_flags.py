"""The sample flags of every subcommand that runs samples: --samples, --seed, --inputs, --normalization,
--stateful (and --no-isolated for the commands that compare).

`add_sample_flags` adds them (the same names, defaults and help everywhere); `sample_settings`
turns the parsed flags into the one `SampleSettings` (validated there: `--samples` at least 1;
left out it means every sample of --inputs, or the default count of random samples).
"""

from __future__ import annotations

import argparse

from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings, check_count


def add_sample_flags(p: argparse.ArgumentParser, *, what: str = "samples", exclusive: bool = False,
                     stateful: bool = False) -> None:  # fmt: skip
    """Add the four flags; `exclusive`: --samples and --inputs cannot be given together
    (random samples only are counted); `stateful`: --stateful too (the commands that run the
    samples as one stream when asked: compare, report, graph, compare-runtimes; the others run
    every sample from a reset state)."""
    group = p.add_mutually_exclusive_group() if exclusive else p
    every = "" if exclusive else ", or every sample of --inputs"
    group.add_argument("--samples", type=int, metavar="N",
                       help=f"number of {what} (default: on the bundled example pair its bundled inputs, else "
                            f"{DEFAULT_COUNT} random{every})")  # fmt: skip
    group.add_argument("--inputs", metavar="PATH", help=f"{what}: .npy / .npz file or a folder of images "
                                                        "(default: the bundled example pair's own inputs, else random)")  # fmt: skip
    p.add_argument("--seed", type=int, default=SampleSettings.seed,
                   help=f"seed for random samples and subsets (default {SampleSettings.seed})")  # fmt: skip
    p.add_argument(
        "--normalization",
        metavar="SPEC",
        help="image folders: '-1,1', '0,1', '0,255' or 'mean=M,std=S' (default: model metadata, else -1,1)",
    )
    if not stateful:
        return
    p.add_argument("--stateful", action="store_true",
                   help="a stateful model (LSTM state, resource variables) runs the samples as one stream, in order, "
                        "its state carried from sample to sample and reset once at the start, for both models "
                        "(default: the state is reset before every sample)")  # fmt: skip


def add_isolated_flag(p: argparse.ArgumentParser) -> None:
    """--no-isolated (the own error is computed by default; --isolated, its old opt-in, stays
    accepted and changes nothing)."""
    p.add_argument("--isolated", action=argparse.BooleanOptionalAction, default=True,
                   help="each layer's own (isolated) error, which the diagnosis needs to tell a layer's own cause "
                        "(bias shift, weight rounding) from inherited error; on by default, --no-isolated skips it")  # fmt: skip


def add_blame_flag(p: argparse.ArgumentParser) -> None:
    """--no-blame: skip measuring the root causes (one edited model per candidate layer)."""
    p.add_argument("--blame", action=argparse.BooleanOptionalAction, default=True,
                   help="measure the root causes: for the few candidate layers, what removing the layer's own error "
                        "does to the model output on held-out samples, and what its fix gains (on by default; "
                        "--no-blame skips it, --no-isolated too)")  # fmt: skip


def use_example_inputs(args: argparse.Namespace, command: str, models: tuple[str | None, ...] | None = None) -> str:
    """The bundled example without --inputs: its bundled inputs and labels, not random samples
    (--samples N then takes N of them, where --samples and --inputs go together). `models`: the
    models the command runs (default FLOAT and QUANT, both needed): the example pair in either
    order, or one model alone that is one of its two files. Every command that runs samples calls
    this (compare, report, graph, suggest, requantize, compare-runtimes, extract). Returns the note
    the command prints on stderr once it succeeded (a failure stays one line), or ""."""
    from inspector.paths import example_inputs, example_pair, is_example_pair, same_bytes

    if args.inputs is not None or not example_inputs().exists():
        return ""
    if models is None:
        if not args.quant_model:
            return ""
        models = (args.float_model, args.quant_model)
    given = [m for m in models if m]
    if len(given) == 2:
        ok = is_example_pair(*given) or is_example_pair(*given[::-1])  # (the wrong way round: swapped back, the same samples)
    else:
        ok = len(given) == 1 and any(same_bytes(given[0], e) for e in example_pair())
    if not ok:
        return ""
    args.inputs = str(example_inputs())
    return f"{command}: the bundled example pair: used its inputs and labels {args.inputs} (--inputs PATH chooses others)"


def sample_settings(args: argparse.Namespace) -> SampleSettings:
    """The SampleSettings the flags ask for; InputError (exit 2) for a bad --samples."""
    check_count(args.samples, "--samples")
    return SampleSettings(
        count=ALL if args.samples is None else args.samples,
        seed=args.seed,
        source=args.inputs,
        normalization=args.normalization,
        carry_state=bool(getattr(args, "stateful", False)),
    )


def sample_flags(settings: SampleSettings) -> str:
    """The flags that ask for `settings` again (for 'reproduce:' lines): never '--samples None'."""
    import shlex

    if settings.source is None:
        return f"--samples {settings.random_count} --seed {settings.seed}"
    flags = f"--inputs {shlex.quote(settings.source)}"
    if settings.count is not ALL:
        flags += f" --samples {settings.count} --seed {settings.seed}"
    if settings.normalization:
        flags += f" --normalization {shlex.quote(settings.normalization)}"
    if settings.carry_state:
        flags += " --stateful"
    return flags


def input_mapping_note(args: argparse.Namespace, command: str, model: str | None) -> str:
    """The line saying which array of --inputs feeds which model input, where an array is not
    named after its input (as compare's source line says it); "" otherwise. Commands that print no
    source line of their own (requantize, suggest, extract) print it on stderr, so no array is used
    silently. A file the run will refuse is left to the run (one line there)."""
    if not getattr(args, "inputs", None) or not model or str(model).lower().endswith((".h5", ".keras")):
        return ""
    from inspector.core.errors import InspectorError
    from inspector.core.samples.sources import open_source
    from inspector.core.tflite.model import load_model
    from inspector.core.tflite.signatures import select_signature

    try:
        source = open_source(select_signature(load_model(model), getattr(args, "signature", None)), None, sample_settings(args))
    except (InspectorError, OSError, ValueError):
        return ""
    return f"{command}: inputs: {source.description}" if "feed" in source.description else ""
