"""The sample flags of every subcommand that runs samples: --samples, --seed, --inputs, --normalization
(and --no-isolated for the commands that compare).

`add_sample_flags` adds them (the same names, defaults and help everywhere); `sample_settings`
turns the parsed flags into the one `SampleSettings` (validated there: `--samples` at least 1;
left out it means every sample of --inputs, or the default count of random samples).
"""

from __future__ import annotations

import argparse

from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings, check_count


def add_sample_flags(p: argparse.ArgumentParser, *, what: str = "samples", exclusive: bool = False) -> None:
    """Add the four flags; `exclusive`: --samples and --inputs cannot be given together
    (random samples only are counted)."""
    group = p.add_mutually_exclusive_group() if exclusive else p
    every = "" if exclusive else ", or every sample of --inputs"
    group.add_argument("--samples", type=int, metavar="N",
                       help=f"number of {what} (default: {DEFAULT_COUNT} random{every})")  # fmt: skip
    group.add_argument("--inputs", metavar="PATH", help=f"{what}: .npy / .npz file or a folder of images (default: random)")
    p.add_argument("--seed", type=int, default=SampleSettings.seed,
                   help=f"seed for random samples and subsets (default {SampleSettings.seed})")  # fmt: skip
    p.add_argument(
        "--normalization",
        metavar="SPEC",
        help="image folders: '-1,1', '0,1', '0,255' or 'mean=M,std=S' (default: model metadata, else -1,1)",
    )


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


def use_example_inputs(args: argparse.Namespace, command: str) -> str:
    """The bundled example pair without --inputs: its bundled inputs and labels, not random
    samples (--samples N then takes N of them). Returns the note the command prints on stderr
    once it succeeded (a failure stays one line), or ""."""
    from inspector.paths import example_inputs, is_example_pair

    if args.inputs is not None or not args.quant_model:
        return ""
    pair = (args.float_model, args.quant_model)
    if not (is_example_pair(*pair) or is_example_pair(*pair[::-1])) or not example_inputs().exists():
        return ""  # (given the wrong way round, the pair check swaps it back: the same samples)
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
    return flags
