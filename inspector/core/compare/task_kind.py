"""Is a model output a vector of class scores? Decided from the graph, not from the shape.

A 6-value regression head and a 1404-value landmark output are vectors too; scoring them by
top-1 agreement says nothing. An output is classification when:
- the user asked for it (`--task classification`), or
- its producer, looked at through DEQUANTIZE/QUANTIZE/RESHAPE/SQUEEZE, is SOFTMAX or LOGISTIC
  (a probability vector) and it holds >= 2 scores per sample, or
- labels or class names were given with the samples (the user says these are classes) and it
  holds >= 2 scores per sample.
Everything else is regression (MAE, RMSE, max error). `other` is the old name of regression.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import CLASS_SCORE_OPS, CLASS_SCORE_PATH_OPS

KINDS = ("classification", "regression")
ALIASES = {"other": "regression"}


@overload
def normalized_kind(kind: str) -> str: ...
@overload
def normalized_kind(kind: None) -> None: ...
def normalized_kind(kind: str | None) -> str | None:
    """The canonical kind name ("other" -> "regression"); ValueError for an unknown kind."""
    if kind is None:
        return None
    kind = ALIASES.get(kind, kind)
    if kind not in KINDS:
        raise ValueError(f"unknown task kind {kind!r}; choose one of {KINDS}")
    return kind


def is_score_vector(output_shape: Sequence[int]) -> bool:
    """One vector of >= 2 values per sample (leading batch and unit dimensions ignored)."""
    dims = [d for d in output_shape[1:] if d != 1] if len(output_shape) > 1 else list(output_shape)
    return len(dims) == 1 and dims[0] >= 2


def probability_producer(model: Model, tensor: int) -> str | None:
    """The SOFTMAX/LOGISTIC op type that produces `tensor` (through DEQUANTIZE, QUANTIZE,
    RESHAPE, SQUEEZE) in the model's chosen subgraph, else None."""
    producers = model.main.producers()
    seen: set[int] = set()
    while tensor >= 0 and tensor not in seen:
        seen.add(tensor)
        op = producers.get(tensor)
        if op is None:
            return None
        if op.type in CLASS_SCORE_OPS:
            return op.type
        if op.type not in CLASS_SCORE_PATH_OPS or not op.inputs:
            return None
        tensor = op.inputs[0]
    return None


def choose_kind(
    shape: Sequence[int], producer: str | None, labelled: bool, requested: str | None = None
) -> tuple[str, str]:
    """(kind, reason in words) for one output."""
    requested = normalized_kind(requested)
    if requested is not None:
        return requested, f"--task {requested} (chosen by the user)"
    if not is_score_vector(shape):
        return "regression", "the output is not one vector of scores per sample"
    if producer is not None:
        return "classification", f"produced by {producer} (a probability vector)"
    if labelled:
        return "classification", "labels or class names were given with the samples"
    return "regression", "no SOFTMAX/LOGISTIC produces it and no labels were given: scored as regression"


def output_kinds(
    fm: Model, qm: Model, pairs: Sequence[tuple[int, int]], labelled: bool, requested: str | None = None
) -> tuple[tuple[str, str], ...]:
    """(kind, reason) of each model output, `pairs` = (float tensor, quantized tensor)."""
    out = []
    for ft, qt in pairs:
        producer = probability_producer(fm, ft) or probability_producer(qm, qt)
        shape = fm.main.tensors[ft].shape
        out.append(choose_kind(tuple(shape), producer, labelled, requested))
    return tuple(out)
