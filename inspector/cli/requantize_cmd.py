"""`tflite-inspector requantize FLOAT --out NEW.tflite [--base ...] [--keep-float PATTERN ...] ...`.

PATTERN is a regex searched in op output tensor names, or `op:INDEX` (main subgraph). Layer
options apply in command-line order; a later one wins for an op selected twice.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from inspector.core.errors import InputError

_LAYER_FLAGS = {
    "--keep-float": "keep_float",
    "--a16w8": "a16w8",
    "--int8": "int8",
    "--dynamic": "dynamic",
    "--weight-only": "weight_only_int8",
    "--weight-only-int4": "weight_only_int4",
}


class _LayerAction(argparse.Action):
    """Collect (treatment, pattern) pairs from several flags, keeping their order."""

    def __call__(self, parser, namespace, values, option_string=None):
        items = list(getattr(namespace, self.dest) or [])
        items += [(_LAYER_FLAGS[option_string], v) for v in values]
        setattr(namespace, self.dest, items)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "requantize",
        help="quantize a float model with per-layer choices (litert-quantizer), checked in LiteRT",
        description="Quantize FLOAT with a base scheme and per-layer overrides; PATTERN is a regex "
        "over op output tensor names or op:INDEX.",
    )
    p.add_argument("model", metavar="FLOAT", help="the float .tflite model (only read)")
    p.add_argument(
        "--out", required=True, metavar="NEW.tflite", help="where to write the new model"
    )
    p.add_argument(
        "--base",
        default="int8",
        choices=["int8", "a16w8", "dynamic", "weight_only"],
        help="scheme for every op not selected (default int8)",
    )
    for flag, treatment in _LAYER_FLAGS.items():
        p.add_argument(
            flag,
            dest="layers",
            nargs="+",
            action=_LayerAction,
            default=[],
            metavar="PATTERN",
            help=f"ops to give the {treatment} treatment",
        )
    p.add_argument(
        "--per-tensor", action="store_true", help="per-tensor weight scales (default per-channel)"
    )
    p.add_argument(
        "--algorithm",
        default="min_max",
        choices=["min_max", "mse", "octav"],
        help="range algorithm (mse: weights of conv/fc only)",
    )
    p.add_argument(
        "--recipe",
        metavar="RECIPE.json",
        help="apply a saved litert-quantizer recipe instead of the options above",
    )
    src = p.add_mutually_exclusive_group()
    src.add_argument(
        "--samples", type=int, metavar="N", help="number of random calibration samples (default 8)"
    )
    src.add_argument(
        "--inputs", metavar="PATH", help="calibration samples: .npy/.npz file or a folder of images"
    )
    p.add_argument("--seed", type=int, default=0, help="seed for random samples (default 0)")
    p.add_argument(
        "--save-recipe", metavar="PATH", help="also write the recipe that reproduces the model"
    )
    p.add_argument(
        "--json", metavar="PATH", help="write the result summary as JSON ('-' for standard output)"
    )


def _refuse_inputs(target: str | None, inputs: list[str], what: str) -> None:
    if target is None:
        return
    t = Path(target)
    for p in inputs:
        if t.exists() and Path(p).exists() and os.path.samefile(t, p):
            raise InputError(f"{what} would overwrite an input file; choose another path", target)


def run(args: argparse.Namespace) -> int:
    from inspector.core.requant_plan import Override, Plan
    from inspector.core.requantize import load_recipe, save_model, save_recipe
    from inspector.core.writing import write_json_output

    protect = (
        [args.model]
        + ([args.recipe] if args.recipe else [])
        + ([args.inputs] if args.inputs else [])
    )
    _refuse_inputs(args.out, protect, "--out")
    _refuse_inputs(args.save_recipe, protect, "--save-recipe")
    if args.samples is not None and args.samples < 1:
        raise InputError("--samples must be at least 1")
    recipe = load_recipe(args.recipe) if args.recipe else None
    if recipe is not None and args.layers:
        raise InputError("--recipe replaces the layer options; give one or the other")
    plan = Plan(
        base=args.base,
        overrides=tuple(Override(pattern, treatment) for treatment, pattern in args.layers),
        per_channel=not args.per_tensor,
        algorithm=args.algorithm,
    )
    samples = _samples(args) if args.inputs else None
    from inspector.core.isolation import run_isolated
    from inspector.core.requant_jobs import requantize_cli_job

    result = run_isolated(
        requantize_cli_job, args.model, None if recipe else plan, samples, recipe, args.samples or 8, args.seed,
        step="requantizing (calibrating and validating the new model)", models=(args.model,),
    )  # fmt: skip
    save_model(result, args.out, protect=protect)
    if args.save_recipe:
        save_recipe(result, args.save_recipe, protect=protect)
    if args.json:
        write_json_output(result.to_json(), args.json)
    out = sys.stderr if args.json == "-" else sys.stdout
    float_size = Path(args.model).stat().st_size
    print(
        f"wrote {args.out} ({result.size_bytes:,} bytes; float model {float_size:,} bytes)",
        file=out,
    )
    for note in result.notes:
        print(f"note: {note}", file=out)
    return 0


def _samples(args: argparse.Namespace):
    from inspector.core.model import load_model

    try:
        from inspector.core.inputs import open_source
    except ImportError:  # pragma: no cover - the inputs module ships with the app
        raise InputError("--inputs needs inspector.core.inputs, which is not available") from None
    return list(open_source(load_model(args.model), None, args.inputs, args.samples, args.seed))
