"""Before comparing: swap a pair given the wrong way round, refuse one that is not twins.

Every command that takes a pair (compare, report, graph, suggest, requantize FLOAT QUANT and
--calibrate-from, extract --float) runs this one check (`check_pair_args`), with the same
--allow-unrelated (`pair_flag.add_allow_unrelated_flag`)."""

from __future__ import annotations

import sys

from inspector.core.compare.pair_check import PairCheck, check_pair
from inspector.core.compare.pairing import check_correspondence
from inspector.core.errors import PairingError
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature


def _check(float_path: str, quant_path: str, signature: str | None) -> PairCheck:
    a = select_signature(load_model(float_path), signature)
    b = select_signature(load_model(quant_path), signature)
    check_correspondence(a, b)  # inputs/outputs that cannot match: the more precise message
    return check_pair(a, b)


def guarded_pair(
    float_path: str, quant_path: str, command: str, *, allow_unrelated: bool, signature: str | None = None
) -> tuple[str, str, PairCheck]:
    """(float, quant, check): swapped when QUANT is the float model (a note on stderr); raises
    PairingError (exit 2, one line with the share of weights that disagree) when the weights say
    the two are different models, unless `allow_unrelated`. The check is of `signature`'s
    subgraphs, as the comparison will run them; pass it on to the comparison (`pair_check=`)."""
    from inspector.core.runtime.prepared_cache import kept

    # kept on disk for the next command of this pair (a 1,458-op pair: a second of this process's
    # CPU beside the worker's); a pair that fails the correspondence check raises, nothing is kept
    check = kept("pair-check", (float_path, quant_path), (signature,), lambda: _check(float_path, quant_path, signature))
    if check.swapped:
        print(
            f"tflite-inspector {command}: note: {quant_path} is the float model and {float_path} the quantized one; "
            "comparing them the other way round",
            file=sys.stderr,
        )
        float_path, quant_path = quant_path, float_path
    if check.note and (check.related or allow_unrelated):  # weights, none compared: the pair is unverified
        print(f"tflite-inspector {command}: note: {check.note}", file=sys.stderr)
    if not check.related:
        unrelated = "; ".join(r for r in check.reasons if "swapped" not in r)
        if not allow_unrelated:
            raise PairingError(f"not a float/quantized twin pair: {unrelated} (--allow-unrelated compares anyway)", quant_path)
        print(f"tflite-inspector {command}: warning: {unrelated}", file=sys.stderr)
    return float_path, quant_path, check


def guarded_keras_pair(
    model_path: str, quant_path: str, command: str, *, allow_unrelated: bool, signature: str | None = None
) -> PairCheck:
    """`guarded_pair` for a Keras / SavedModel model A: the same check on its float twin (made
    in the worker once, cached), B's kernels against the QAT model's fake-quantized kernels (or
    the float kernels), inputs and outputs. Raises PairingError (exit 2, the figures) for a
    TFLite model that is not an export of this Keras model, unless `allow_unrelated`."""
    from inspector.core.keras.pair_check import keras_pair_check
    from inspector.core.runtime.worker import run_isolated

    check, twin = run_isolated(
        keras_pair_check, model_path, quant_path, signature, step="checking the pair", models=(model_path, quant_path)
    )
    from inspector.core.keras.pair_inputs import check_twin_inputs

    a = select_signature(load_model(twin), signature)
    b = select_signature(load_model(quant_path), signature)
    check_twin_inputs(a, b, model_path, quant_path)  # one line naming the Keras model, not its cached twin
    check_correspondence(a, b)
    if check.note and (check.related or allow_unrelated):
        print(f"tflite-inspector {command}: note: {check.note}", file=sys.stderr)
    if not check.related:
        unrelated = "; ".join(check.reasons)
        if not allow_unrelated:
            raise PairingError(f"not an export of {model_path}: {unrelated} (--allow-unrelated compares anyway)", quant_path)
        print(f"tflite-inspector {command}: warning: {unrelated}", file=sys.stderr)
    return check


def check_pair_args(args, command: str, float_attr: str = "float_model", quant_attr: str = "quant_model",
                    *, swap: bool = True) -> PairCheck:  # fmt: skip
    """The pair check of every command that takes a pair, on `args.<float_attr>` and
    `args.<quant_attr>` (a Keras / SavedModel FLOAT: `guarded_keras_pair`), with the command's
    --allow-unrelated and --signature. A pair given the wrong way round is swapped in `args`
    (`swap` False: refused instead, for an option that names the quantized model)."""
    from inspector.core.keras.detect import is_keras_path

    f, q = getattr(args, float_attr), getattr(args, quant_attr)
    allow, signature = bool(getattr(args, "allow_unrelated", False)), getattr(args, "signature", None)
    if is_keras_path(f):
        return guarded_keras_pair(f, q, command, allow_unrelated=allow, signature=signature)
    if not swap:
        a = select_signature(load_model(f), signature)
        b = select_signature(load_model(q), signature)
        if check_pair(a, b).swapped:
            raise PairingError(f"{q} is a float model and {f} a quantized one: give the float model first", q)
    f, q, check = guarded_pair(f, q, command, allow_unrelated=allow, signature=signature)
    setattr(args, float_attr, f)
    setattr(args, quant_attr, q)
    return check
