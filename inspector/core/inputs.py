"""Sample inputs for a float/quantized pair: random, .npy/.npz arrays, or a folder of images.

A `Sample` holds one value per float-model input (float32 for float inputs, the input's own
type for integer inputs such as token ids), with the batch dimension. `feed(model, sample)`
converts it for either model: int8/uint8/int16 inputs are quantized with that input's own
scale and zero-point, so the float and the quantized model see the same data.

Random samples (seeded, reproducible per sample index) are uniform within the representable
float range of the quantized model's version of each input (its int8 input, or the QUANTIZE
op that reads a float input), else uniform in [-1, 1]; integer inputs get integers in [0, 10).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from inspector.core.errors import InputError
from inspector.core.model import Model, Tensor
from inspector.core.quant import quantize, tensor_range

QUANTIZED_INPUT_TYPES = ("int8", "uint8", "int16")
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
        if sig.subgraph == 0:
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
        if sig.subgraph == 0:
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


def convert_for(tensor: Tensor, value: np.ndarray, source: str, model_path: str) -> np.ndarray:
    """One input value in `tensor`'s dtype (quantized with its scale/zero-point if needed)."""
    if not shape_fits(value.shape, tensor.shape, tensor.shape_signature):
        raise InputError(
            f"input '{tensor.name}' of {os.path.basename(model_path)} expects shape "
            f"{list(tensor.shape_signature)}, got {list(value.shape)}",
            source,
        )
    if tensor.dtype in QUANTIZED_INPUT_TYPES and tensor.quantization is not None:
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


def quant_input_range(float_model: Model, quant_model: Model | None, spec_pos: int) -> tuple[float, float] | None:
    """Float range the quantized model can represent for float input number `spec_pos`."""
    if quant_model is None:
        return None
    qsg = quant_model.main
    names = tuple(s.name for s in input_specs(float_model))
    order = _model_input_order(quant_model, names)
    for t, pos in zip(qsg.inputs, order, strict=False):
        if pos != spec_pos:
            continue
        r = tensor_range(qsg.tensors[t])
        if r is not None:
            return r
        for op in qsg.consumers().get(t, []):
            if op.type == "QUANTIZE" and op.outputs:
                r = tensor_range(qsg.tensors[op.outputs[0]])
                if r is not None:
                    return r
    return None


def random_source(float_model: Model, quant_model: Model | None, count: int, seed: int = 0) -> SampleSource:
    specs = input_specs(float_model)
    names = tuple(s.name for s in specs)
    ranges = [quant_input_range(float_model, quant_model, i) for i in range(len(specs))]

    def make() -> Iterator[Sample]:
        for i in range(count):
            rng = np.random.default_rng([seed, i])
            values = []
            for spec, rg in zip(specs, ranges, strict=True):
                shape = tuple(max(d, 1) for d in spec.shape)
                if spec.dtype.startswith("float") or spec.dtype in QUANTIZED_INPUT_TYPES:
                    lo, hi = rg if rg is not None else (-1.0, 1.0)
                    values.append(rng.uniform(lo, hi, shape).astype(np.float32))
                elif spec.dtype == "bool":
                    values.append(rng.random(shape) < 0.5)
                elif spec.dtype.startswith(("int", "uint")):
                    values.append(rng.integers(0, 10, shape).astype(spec.dtype))
                else:
                    raise InputError(f"input '{spec.name}' has type {spec.dtype}: give sample files", float_model.path)
            yield Sample(i, f"random #{i} (seed {seed})", values, None, names)

    return SampleSource(count, make, f"{count} random samples (seed {seed})")


def open_source(
    float_model: Model,
    quant_model: Model | None,
    path: str | None,
    count: int | None,
    seed: int = 0,
    normalization: str | None = None,
) -> SampleSource:
    """Random samples when `path` is None, else .npy / .npz / a folder of images."""
    if path is None:
        return random_source(float_model, quant_model, 8 if count is None else count, seed)
    p = Path(path)
    if p.is_dir():
        from inspector.core.image_inputs import image_source

        return image_source(float_model, p, count, seed, normalization)
    if not p.exists():
        raise InputError("no such file or folder", str(path))
    if p.suffix.lower() in (".npy", ".npz"):
        from inspector.core.array_inputs import array_source

        return array_source(float_model, p, count)
    raise InputError("not a .npy or .npz file or a folder of images", str(path))

