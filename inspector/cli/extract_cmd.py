"""`tflite-inspector extract QUANT --op N --out DIR`: one op of the quantized model as a repro.

DIR receives model.tflite (that op alone, B's own tensors and constants, integer inputs and
outputs), inputs.npz (the op's inputs captured in the full model over the samples), expected.npz
(the full model's op outputs; with --float the float op's outputs as `float:NAME`), run.py
(reference kernels and XNNPACK, differences in LSB) and extract.json. The capture runs in the
worker process.
"""

from __future__ import annotations

import argparse

from inspector.cli.sample_flags import (
    add_sample_flags,
    input_mapping_note,
    sample_settings,
    use_example_inputs,
)


def add_parser(sub) -> None:
    p = sub.add_parser("extract", help="extract one op of the quantized model, with its captured inputs, as a minimal repro")
    p.add_argument("quant_model", metavar="QUANT", help="quantized .tflite")
    p.add_argument("--op", type=int, required=True, metavar="N", help="op index in the quantized model (compare --json op_index)")
    p.add_argument("--float", dest="float_model", metavar="FLOAT", help="float .tflite: also save the paired float op's outputs")
    p.add_argument("--signature", metavar="KEY", help="the op belongs to this signature's subgraph (default: subgraph 0)")
    p.add_argument("--out", required=True, metavar="DIR", help="folder to write (created when missing, inside an existing folder)")
    add_sample_flags(p, exclusive=True)
    from inspector.cli.pair_flag import add_allow_unrelated_flag

    add_allow_unrelated_flag(p)


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from inspector.core.compare.extract import FILES, extract_op, write_extraction
    from inspector.core.errors import InputError
    from inspector.core.runtime.worker import run_isolated
    from inspector.core.writing import refuse_if_input

    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError("--out must be a folder, and this is an existing file", str(out))
    refuse_if_input(args.out, "--out")
    for name in FILES:  # before any work: no file of DIR may be an input model
        refuse_if_input(out / name, f"--out ({name})")
    if args.float_model:  # a pair: the one pair check (compare's)
        from inspector.cli.pair_guard import check_pair_args

        check_pair_args(args, "extract", swap=False)
    models = tuple(m for m in (args.quant_model, args.float_model) if m)
    note = use_example_inputs(args, "extract", models) if args.samples is None else ""  # the bundled example: its inputs
    ex = run_isolated(
        extract_op, args.quant_model, args.op, sample_settings(args),
        kwargs={"float_path": args.float_model, "signature": args.signature},
        step=f"capturing op {args.op}", models=models,
    )  # fmt: skip
    write_extraction(ex, args.out)
    exact = "bit-exact" if ex.reference_bit_exact else "NOT bit-exact"
    lsb = ", ".join(f"{v:g}" for v in ex.xnnpack_max_lsb.values()) or "-"
    print(f"op {ex.op_index} ({ex.op_type}) over {ex.samples} samples -> {args.out}: reference kernels {exact} "
          f"with the full model; XNNPACK max difference {lsb} LSB; run: python {out / 'run.py'}")  # fmt: skip
    import sys

    for line in (note, input_mapping_note(args, "extract", args.quant_model)):
        if line:
            print(line, file=sys.stderr)
    return 0
