"""Calibration statistics taken from the user's quantized model B instead of from samples.

For each activation tensor of the float model A that pairs (compare/pairing) with a per-tensor
int8/int16 tensor of B, the quantizer is handed B's representable range S*(qmin-Z) .. S*(qmax-Z)
as that tensor's min/max. litert-quantizer turns min/max back into scale and zero point
(asymmetric int8: S = (max-min)/255, Z = qmin - min/S; symmetric int16: S = max|.|/32767), so an
unchanged layer gets exactly B's parameters, and only what the plan changes (and what B has no
counterpart for) keeps the statistics measured on the samples. The output of a producer B
equalized (`compare/equalized.py`) is not seeded: B's range there stands for A's values ÷ s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from inspector.core.compare.equalized import float_divisors
from inspector.core.compare.pairing import check_correspondence, pair_models
from inspector.core.errors import InputError
from inspector.core.tflite.model import Model, Tensor

# Which B tensor best stands for a float tensor: a name match first, then graph I/O, then structure.
_MATCH_RANK = {"name": 0, "graph_input": 1, "graph_output": 1, "structure": 2}


@dataclass(frozen=True)
class SeededRange:
    """B's representable range for one activation tensor of A (keyed by A's tensor name)."""

    float_name: str
    quant_name: str
    dtype: str
    scale: float
    zero_point: int
    low: float
    high: float


@dataclass
class Seeds:
    """The ranges taken from B, and what could not be seeded (with the reason)."""

    quant_path: str
    ranges: dict[str, SeededRange] = field(default_factory=dict)  # A's tensor name -> range
    unpaired: list[str] = field(default_factory=list)


def representable_range(dtype: str, scale: float, zero_point: int) -> tuple[float, float]:
    """S*(qmin-Z) .. S*(qmax-Z); int16 activations are symmetric, so qmin = -qmax there."""
    qmin, qmax = (-128, 127) if dtype == "int8" else (-32767, 32767)
    s = float(np.float64(scale))
    return s * (qmin - zero_point), s * (qmax - zero_point)


def _quantized_activation(t: Tensor) -> bool:
    q = t.quantization
    return (
        not t.is_constant
        and t.dtype in ("int8", "int16")
        and q is not None
        and len(q.scales) == 1
        and float(q.scales[0]) > 0
    )


def seeds_from(float_model: Model, quant_model: Model) -> Seeds:
    """Pair A with B (main subgraph) and read B's range for every paired activation tensor."""
    if not any(_quantized_activation(t) for sg in quant_model.subgraphs for t in sg.tensors):
        raise InputError(
            "--calibrate-from needs a model with int8/int16 activations; this one has none",
            quant_model.path,
        )
    check_correspondence(float_model, quant_model)
    pairing = pair_models(float_model, quant_model)
    fsg, qsg = float_model.main, quant_model.main
    producers = qsg.producers()
    best: dict[int, tuple[tuple[int, int], int]] = {}
    equalized = set(float_divisors(quant_model, pairing))  # B's range there stands for A's ÷ s: not A's
    for tp in pairing.tensors:
        ft, qt = fsg.tensors[tp.float_tensor], qsg.tensors[tp.quant_tensor]
        if ft.is_constant or ft.dtype != "float32" or not _quantized_activation(qt) or tp.float_tensor in equalized:
            continue
        if ft.num_elements != qt.num_elements:
            continue
        prod = producers.get(tp.quant_tensor)
        requant = (
            prod is not None
            and prod.type == "QUANTIZE"
            and bool(prod.inputs)
            and (qsg.tensors[prod.inputs[0]].dtype in ("int8", "int16"))
        )  # a requantized copy an op reads, not the tensor's own range
        rank = (_MATCH_RANK.get(tp.match, 3), int(requant))
        if tp.float_tensor not in best or rank < best[tp.float_tensor][0]:
            best[tp.float_tensor] = (rank, tp.quant_tensor)
    seeds = Seeds(str(quant_model.path))
    for fi, (_, qi) in best.items():
        ft, qt = fsg.tensors[fi], qsg.tensors[qi]
        assert qt.quantization is not None
        scale, zp = float(qt.quantization.scales[0]), int(qt.quantization.zero_points[0])
        low, high = representable_range(qt.dtype, scale, zp)
        seeds.ranges[ft.name] = SeededRange(ft.name, qt.name, qt.dtype, scale, zp, low, high)
    seeds.unpaired = [
        t.name
        for t in fsg.tensors
        if not t.is_constant and t.dtype == "float32" and t.index not in best
    ]
    return seeds


def apply_seeds(
    qsvs: dict[str, Any],
    seeds: Seeds,
    recalibrate: set[str],
    renamed: dict[str, str],
) -> tuple[list[str], list[str]]:
    """Overwrite the sample statistics in `qsvs` with B's ranges, except for `recalibrate`d names.

    `renamed` maps A's tensor names to their names in the quantizer's working copy. Only tensors
    the quantizer calibrated are touched (it reads no other statistics). Returns the seeded and
    the re-calibrated tensor names (A's names).
    """
    seeded, kept = [], []
    for name, r in seeds.ranges.items():
        key = renamed.get(name, name)
        current = qsvs.get(key)
        if not current or "min" not in current or "max" not in current:
            continue
        if name in recalibrate:
            kept.append(name)
            continue
        # float64 on purpose: the quantizer's (max - min) / 255 must give back B's scale exactly
        qsvs[key] = {
            **current,
            "min": np.full(np.shape(current["min"]), r.low, dtype=np.float64),
            "max": np.full(np.shape(current["max"]), r.high, dtype=np.float64),
        }
        seeded.append(name)
    return seeded, kept
