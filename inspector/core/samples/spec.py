"""What a sample is, and how one is fed to either model of a pair.

A `Sample` holds one value per float-model input (float32 for float inputs, the input's own
type for integer inputs such as token ids), with the batch dimension. `feed(model, sample)`
converts it for either model: int8/uint8/int16 inputs are quantized with that input's own
scale and zero-point, so the float and the quantized model see the same data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from inspector.core.errors import InputError
from inspector.core.quantmath.quant import quantize
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.model import Model, Tensor

LABELS_KEY = "labels"


@dataclass(frozen=True)
class InputSpec:
    """One float-model input: tensor name, signature name (if any), shape, dtype."""

    name: str
    key: str | None
    tensor: int
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class Sample:
    index: int
    source: str  # file (and key / row) or "random #i": shown to the user
    inputs: list[np.ndarray]  # one per float-model input, with batch dim
    label: int | None = None
    names: tuple[str, ...] = field(default=(), compare=False)  # input tensor names, for feed()


def input_specs(model: Model) -> list[InputSpec]:
    sg = model.main
    keys: dict[int, str] = {}
    for sig in model.signatures:
        if sig.subgraph == model.main.index:
            keys.update({t: k for k, t in sig.inputs.items()})
    return [
        InputSpec(
            name=sg.tensors[i].name,
            key=keys.get(i),
            tensor=i,
            shape=sg.tensors[i].shape,
            shape_signature=sg.tensors[i].shape_signature,
            dtype=sg.tensors[i].dtype,
        )
        for i in sg.inputs
    ]


def _model_input_order(model: Model, names: Sequence[str]) -> list[int]:
    """Position in `names` (float-model input names) of each input of `model`."""
    sg = model.main
    keys = {}
    for sig in model.signatures:
        if sig.subgraph == model.main.index:
            keys.update({t: k for k, t in sig.inputs.items()})
    order = []
    for pos, t in enumerate(sg.inputs):
        nm = sg.tensors[t].name
        if nm in names:
            order.append(list(names).index(nm))
        elif keys.get(t) in names:
            order.append(list(names).index(keys[t]))
        else:
            order.append(pos)
    return order


def feed_order(model: Model, sample: Sample) -> list[int]:
    """Position in `sample.inputs` of each of `model`'s inputs (the order `feed` uses)."""
    return _model_input_order(model, sample.names) if sample.names else list(range(len(model.main.inputs)))


def shape_fits(shape: Sequence[int], spec_shape: Sequence[int], signature: Sequence[int]) -> bool:
    if len(shape) != len(spec_shape):
        return False
    return all(d == s or g < 0 for d, s, g in zip(shape, spec_shape, signature, strict=True))


def feed(model: Model, sample: Sample) -> dict[int, np.ndarray]:
    """{input tensor index: value in that input's dtype} for `model`."""
    sg = model.main
    order = _model_input_order(model, sample.names) if sample.names else list(range(len(sg.inputs)))
    out: dict[int, np.ndarray] = {}
    for t, pos in zip(sg.inputs, order, strict=True):
        tensor = sg.tensors[t]
        if pos >= len(sample.inputs):
            raise InputError(f"input '{tensor.name}' has no value in this sample", sample.source)
        out[t] = convert_for(tensor, sample.inputs[pos], sample.source, model.path)
    return out


def signature_feed(model: Model, sample: Sample, key: str | None) -> dict[str, np.ndarray] | None:
    """`feed` keyed by signature `key`'s input names (for LiteRT's signature runner); None
    without a key or when `model` has no such signature."""
    sig = next((s for s in model.signatures if s.key == key), None) if key is not None else None
    if sig is None:
        return None
    name_of = {i: n for n, i in sig.inputs.items()}
    return {name_of[t]: v for t, v in feed(model, sample).items()}


def convert_for(tensor: Tensor, value: np.ndarray, source: str, model_path: str) -> np.ndarray:
    """One input value in `tensor`'s dtype (quantized with its scale/zero-point if needed)."""
    if not shape_fits(value.shape, tensor.shape, tensor.shape_signature):
        raise InputError(
            f"input '{tensor.name}' of {os.path.basename(model_path)} expects shape "
            f"{list(tensor.shape_signature)}, got {list(value.shape)}",
            source,
        )
    if tensor.dtype in QUANTIZED_DTYPES and tensor.quantization is not None:
        if not np.issubdtype(value.dtype, np.floating):
            raise InputError(
                f"input '{tensor.name}' takes float values (quantized by the model's "
                f"{tensor.dtype} scale), got {value.dtype}",
                source,
            )
        return quantize(value, tensor.quantization, tensor.dtype)
    if tensor.dtype.startswith("float"):
        if not np.issubdtype(value.dtype, np.floating):
            raise InputError(f"input '{tensor.name}' is {tensor.dtype}, got {value.dtype} values", source)
        return np.ascontiguousarray(value, dtype=tensor.dtype)
    if tensor.dtype == "bool" or tensor.dtype.startswith(("int", "uint")):
        if not (np.issubdtype(value.dtype, np.integer) or value.dtype == np.bool_):
            raise InputError(f"input '{tensor.name}' is {tensor.dtype}, got {value.dtype} values", source)
        return np.ascontiguousarray(value, dtype=tensor.dtype)
    raise InputError(f"input '{tensor.name}' has type {tensor.dtype}, which samples cannot fill", source)


# --------------------------------------------------------------------------- sample sources
class SampleSource:
    """An iterable of Samples with a known count (and class names for labelled folders)."""

    def __init__(self, count: int, make: Callable[[], Iterator[Sample]], description: str, class_names: tuple[str, ...] | None = None):
        self.count = count
        self._make = make
        self.description = description
        self.class_names = class_names

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Sample]:
        return iter(self._make())
