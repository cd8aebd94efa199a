"""Sample sources for a float/quantized pair: random, .npy/.npz arrays, or a folder of images.

Random samples (seeded, reproducible per sample index) are uniform within the representable
float range of the quantized model's version of each input (its int8 input, or the QUANTIZE
op that reads a float input), else uniform in [-1, 1]; integer inputs get integers in [0, 10).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from inspector.core.errors import InputError
from inspector.core.quantmath.quant import tensor_range
from inspector.core.samples.arrays import array_source
from inspector.core.samples.images import image_source
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.spec import (
    Sample,
    SampleSource,
    _model_input_order,
    input_specs,
)
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.model import Model


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
            values: list[np.ndarray] = []
            for spec, rg in zip(specs, ranges, strict=True):
                shape = tuple(max(d, 1) for d in spec.shape)
                if spec.dtype.startswith("float") or spec.dtype in QUANTIZED_DTYPES:
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


def open_source(float_model: Model, quant_model: Model | None, settings: SampleSettings) -> SampleSource:
    """Random samples when `settings.source` is None, else .npy / .npz / a folder of images."""
    path = settings.source
    if path is None:
        return random_source(float_model, quant_model, settings.random_count, settings.seed)
    p = Path(path)
    if p.is_dir():
        return image_source(float_model, p, settings.count, settings.seed, settings.normalization)
    if not p.exists():
        raise InputError("no such file or folder", str(path))
    if p.suffix.lower() in (".npy", ".npz"):
        return array_source(float_model, p, settings.count)
    raise InputError("not a .npy or .npz file or a folder of images", str(path))
