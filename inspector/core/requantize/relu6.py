"""DFQ's ReLU6 recipe (Nagel et al. 2019, "Data-Free Quantization" §4.1, MobileNetV2): a producer
ending in ReLU6 cannot be equalized (ReLU6 is not positively homogeneous: relu6(x/s) ≠ relu6(x)/s
above 6), so its ReLU6 is replaced by ReLU, then the pair is equalized (`equalize.py`).

This changes the float function: wherever the producer's float pre-activation exceeds 6, A
clamps and the edited B does not. So the edit measures it, from model A, and refuses with the
reason where it matters:
- `saturation`: the share of the producer's float pre-activation values above 6 on the
  calibration samples (read from A-with-ReLU, whose output there is the pre-activation wherever
  it is positive); refused above SATURATION_MAX;
- `output_change`: the float model's own output change when its ReLU6s become ReLU, A-with-ReLU
  against A (Σ(x − y)² / Σx², mean over the outputs, as `Objective.relative_error`), and the
  top-1 decisions of both; refused when its SQNR is below FLOAT_MIN_DB.
A-with-ReLU (`relu_float_model`) is A with the fused activation of the paired float ops set to
RELU; everything else byte-identical. The equalization measures P's output range on it (B now
computes ReLU there). B's metadata record marks the pair `"activation": "RELU"`
(`compare/equalized.py`), so a comparison states that its reference is A's, with ReLU6.
`usable_chain` leaves out of a DFQ chain (`imbalance.dfq_chain`) the pairs whose producer
saturates, saying so, so the blame and Suggest apply the recipe where it holds.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.compare.pairing import Pairing
from inspector.core.errors import InputError
from inspector.core.requantize.imbalance import Chain
from inspector.core.requantize.measure import runner_reading
from inspector.core.samples.spec import Sample, feed
from inspector.core.text.numbers import db
from inspector.core.tflite import edit as fe
from inspector.core.tflite.equalize_pair import RELU6, activation
from inspector.core.tflite.model import Model, load_model
from inspector.core.writing import json_float

if TYPE_CHECKING:
    from inspector.core.requantize.surgery import Surgery
    from inspector.core.runtime.runner import ModelRunner

# Measured on ReLU6-trained digits depthwise-separable CNNs (30-60 epochs, spread planted): 0.5 % of the depthwise
# values above 6 -> the float model with ReLU reads 25 dB against it, 3 of 300 decisions change, held-out accuracy
# -0.5 point (worth it: per-tensor int8 lost 5-75 points); 1.1-1.6 % above 6 -> 18-20 dB, -2.0 points (refused).
SATURATION_MAX = 0.01  # at most 1 % of the producer's float pre-activation values above 6 (calibration samples)
FLOAT_MIN_DB = 20.0  # A-with-ReLU against A: the float output's change at most 1 % of its energy
CLAMP = 6.0


@dataclass(frozen=True)
class FloatChange:
    """The float model's own change when the ReLU6 of `producers` (B ops) become ReLU."""

    producers: tuple[int, ...]
    saturation: dict[int, float]  # B producer -> share of its float pre-activation values above 6
    relative_error: float  # A-with-ReLU vs A: Σ(x − y)² / Σx², mean over the outputs
    top1_a: tuple[int, ...]
    top1_relu: tuple[int, ...]
    samples: int

    @property
    def sqnr_db(self) -> float:
        return math.inf if self.relative_error <= 0 else -10 * math.log10(self.relative_error)

    def to_json(self) -> dict[str, Any]:
        """The surgical result's JSON `float_change` (ReLU6 -> ReLU: the float function changed)."""
        return {"producers": list(self.producers), "saturation": {str(p): v for p, v in sorted(self.saturation.items())},
                "float_sqnr_db": json_float(self.sqnr_db), "top1_same": sum(int(a == b) for a, b in zip(self.top1_a, self.top1_relu, strict=False)),
                "samples": self.samples, "statement": self.statement()}  # fmt: skip

    def statement(self, on: str = "the calibration samples") -> str:
        sat = ", ".join(f"op {p} {100 * v:.2f}%" for p, v in sorted(self.saturation.items()))
        agree = sum(int(a == b) for a, b in zip(self.top1_a, self.top1_relu, strict=False))
        return (f"changes the float function: ReLU6 -> ReLU at op(s) {', '.join(map(str, self.producers))} (values above 6 "
                f"on {on}: {sat}); there the float model with ReLU reads {_db(self.sqnr_db)} dB against the float "
                f"model, top-1 the same on {agree} of {len(self.top1_a)} samples")  # fmt: skip

    def refusal(self) -> str | None:
        """Why the change matters too much to make (None: it does not)."""
        worst = max(self.saturation.items(), key=lambda kv: kv[1], default=None)
        if worst is not None and worst[1] > SATURATION_MAX:
            return (f"op {worst[0]}'s ReLU6 saturates on {100 * worst[1]:.1f}% of its float values on the calibration samples "
                    f"(more than {100 * SATURATION_MAX:.0f}%): replacing it by ReLU would change the float function")  # fmt: skip
        if self.sqnr_db < FLOAT_MIN_DB:
            return (f"the float model with ReLU instead of ReLU6 at op(s) {', '.join(map(str, self.producers))} reads "
                    f"{_db(self.sqnr_db)} dB against the float model (below {FLOAT_MIN_DB:.0f} dB): the float function changes too much")  # fmt: skip
        return None


_db = partial(db, symbols=True)  # "31.2", "∞"


def relu6_producers(qm: Model, producers: Sequence[int]) -> tuple[int, ...]:
    """The ops of `producers` ending in ReLU6."""
    return tuple(p for p in producers if activation(qm, p) == RELU6)


def relu_float_bytes(fm: Model, float_ops: Sequence[int]) -> bytes:
    """A's bytes with the fused activation of `float_ops` (A's op indices) set to RELU; InputError
    when one ends in neither ReLU6 nor ReLU (a ReLU6 A computes as a separate op is not replaced)."""
    m = fe.read(Path(fm.path).read_bytes())
    sg = m.subgraphs[fm.main.index]
    act = schema.ActivationFunctionType
    for i in float_ops:
        opts = sg.operators[i].builtinOptions
        if opts is None or getattr(opts, "fusedActivationFunction", None) not in (act.RELU6, act.RELU):
            raise InputError(f"relu6_equalize: the float model's op {i} does not end in a fused ReLU6", fm.path)
        opts.fusedActivationFunction = act.RELU
    return fe.write(m)


def float_ops(qm: Model, pairing: Pairing, producers: Sequence[int]) -> tuple[int, ...]:
    """A's op of each B producer; InputError when one has no float counterpart."""
    out = []
    for p in producers:
        f = pairing.float_op_for(p)
        if f is None:
            raise InputError(f"relu6_equalize: op {p} has no float counterpart in the float model", qm.path)
        out.append(f)
    return tuple(out)


@contextlib.contextmanager
def relu_float_model(fm: Model, ops: Sequence[int]) -> Iterator[Model]:
    """A-with-ReLU at A's `ops`, as a loaded Model (a temporary file for the block's life)."""
    from inspector.core.requantize.objective import TempModel

    with TempModel(relu_float_bytes(fm, ops)) as path:
        m = load_model(path)
        yield m if fm.signature_key is None else m.for_signature(fm.signature_key)


def _outputs(runner: ModelRunner, model: Model, sample: Sample, tensors: Sequence[int]) -> list[np.ndarray]:
    values = runner.run(feed(model, sample))
    return [np.array(values[t], np.float64) for t in tensors]


def measure_change(fm: Model, relu: Model, qm: Model, pairing: Pairing, producers: Sequence[int],
                   samples: Sequence[Sample], runtime: str = "optimized") -> FloatChange:  # fmt: skip
    """Saturation of each producer's pre-activation, and A-with-ReLU's outputs against A's, on `samples`."""
    outs = list(fm.main.outputs)
    pre = {}
    for p in producers:
        t = pairing.float_for_quant(qm.main.ops[p].outputs[0])
        if t is None:
            raise InputError(f"relu6_equalize: op {p}'s output has no float counterpart in the float model", qm.path)
        pre[p] = t
    ra = runner_reading(fm, runtime, outs)
    rr = runner_reading(relu, runtime, [*outs, *pre.values()])
    above = dict.fromkeys(producers, 0)
    count = dict.fromkeys(producers, 0)
    sums = np.zeros((len(outs), 2))
    top_a, top_r = [], []
    for sample in samples:
        xa = _outputs(ra, fm, sample, outs)
        vals = _outputs(rr, relu, sample, [*outs, *pre.values()])
        xr = vals[: len(outs)]
        for p, v in zip(producers, vals[len(outs) :], strict=True):
            above[p] += int(np.count_nonzero(v > CLAMP))
            count[p] += v.size
        for k, (a, r) in enumerate(zip(xa, xr, strict=True)):
            sums[k] += (float(np.sum(a**2)), float(np.sum((a - r) ** 2)))
        top_a.append(int(np.argmax(xa[0])))
        top_r.append(int(np.argmax(xr[0])))
    rel = float(np.mean([e / x if x > 0 else (0.0 if e == 0 else math.inf) for x, e in sums]))
    sat = {p: above[p] / max(count[p], 1) for p in producers}
    return FloatChange(tuple(producers), sat, rel, tuple(top_a), tuple(top_r), len(samples))


def float_change(fm: Model, qm: Model, pairing: Pairing, producers: Sequence[int], samples: Sequence[Sample],
                 runtime: str = "optimized") -> FloatChange:  # fmt: skip
    """`measure_change` with A-with-ReLU built for the ReLU6 ones of `producers`."""
    ps = relu6_producers(qm, producers)
    with relu_float_model(fm, float_ops(qm, pairing, ps)) as relu:
        return measure_change(fm, relu, qm, pairing, ps, samples, runtime)


def set_relu(s: Surgery, producers: Sequence[int]) -> None:
    """B's `producers` (a `Surgery`): fused activation RELU instead of RELU6."""
    for p in producers:
        s.bsg.operators[p].builtinOptions.fusedActivationFunction = schema.ActivationFunctionType.RELU



def usable_chain(chain: Chain | None, fm: Model, qm: Model, pairing: Pairing, samples: Sequence[Sample],
                 runtime: str = "optimized") -> tuple[Chain | None, list[str]]:  # fmt: skip
    """`chain` without the pairs whose ReLU6 producer saturates on more than SATURATION_MAX of its
    float values on `samples` (the calibration samples), and one line per pair left out saying
    why; the other pairs keep the recipe (a chain without ReLU6 comes back as it is)."""
    if chain is None or not chain.relu6:
        return chain, []
    try:
        change = float_change(fm, qm, pairing, chain.relu6, samples, runtime)
    except InputError as e:
        return Chain(tuple(p for p in chain.pairs if not p.relu6)) or None, [f"relu6_equalize not measured ({e.message})"]
    bad = {p: v for p, v in change.saturation.items() if v > SATURATION_MAX}
    notes = [f"op {p}'s ReLU6 saturates on {100 * v:.1f}% of its float values on the calibration samples (more than "
             f"{100 * SATURATION_MAX:.0f}%): replacing it by ReLU would change the float function, so its pair is left "
             f"out of the relu6_equalize chain" for p, v in sorted(bad.items())]  # fmt: skip
    kept = tuple(p for p in chain.pairs if p.producer not in bad)
    return (Chain(kept) if kept else None), notes
