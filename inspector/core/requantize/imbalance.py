"""Channel imbalance judged by what it costs (Nagel et al. 2019, "Data-Free Quantization" §4.1):
per-tensor weights of a depthwise conv whose channels' ranges spread over decades.

One int8 scale over the depthwise kernel is set by its widest channel; a channel whose range is
SPREAD_MIN times smaller keeps fewer than 127/SPREAD_MIN steps, and its 1x1 consumer multiplies it
back by its large input weights (the imbalance lies along the consumer's *input* axis, which
per-channel scales on the consumer's output axis cannot reach). The lever is equalize of the
(depthwise, consumer) pair; every such pair of the model forms one chain, one fix, one plan.

`dfq_chain` finds them from A's float weights (B's int8 ones have lost the small channels); the
blame measures the chain by applying it (`blame.py`). With `relu6=True` a pair refused only
because its producer ends in ReLU6 joins the chain too (`PairCost.relu6`): the chain's edit is then
`relu6_equalize` (DFQ's recipe, `relu6.py`: ReLU6 -> ReLU, measured as a change of the float
function and refused with the reason where it matters, then equalize).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from inspector.core.compare.pairing import Pairing
from inspector.core.tflite.equalize_pair import RELU6, activation, consumer_of, refusal
from inspector.core.tflite.model import Model

SPREAD_MIN = 16.0  # largest / smallest channel weight range: the smallest channel keeps < 8 of 127 steps
# (trained depthwise-separable digits CNNs: 3-9x in the depthwise weights, 4-5x at the consumer's input)


@dataclass(frozen=True)
class PairCost:
    producer: int  # B op (DEPTHWISE_CONV_2D, per-tensor int8 weights)
    consumer: int
    spread: float  # largest / smallest channel range of the producer's float weights
    steps: float  # int8 steps the smallest channel keeps under the one scale
    amplification: float  # the consumer's input weight ranges, largest / smallest over the producer's channels
    relu6: bool = False  # the producer ends in ReLU6: only relu6_equalize takes the pair

    def evidence(self) -> str:
        return (f"op {self.producer}'s per-tensor depthwise weights spread {self.spread:.0f}x over its channels (largest / "
                f"smallest range): the smallest keeps {self.steps:.2g} of 127 steps, and op {self.consumer}'s input weights, "
                f"spread {self.amplification:.0f}x, multiply the small channels back")  # fmt: skip


@dataclass(frozen=True)
class Chain:
    pairs: tuple[PairCost, ...]

    @property
    def ops(self) -> tuple[int, ...]:
        return tuple(i for p in self.pairs for i in (p.producer, p.consumer))

    @property
    def edit(self) -> str:
        """`relu6_equalize` when a producer ends in ReLU6 (it is plain equalize on the others), else `equalize`."""
        return "relu6_equalize" if any(p.relu6 for p in self.pairs) else "equalize"

    @property
    def relu6(self) -> tuple[int, ...]:
        """The producers whose ReLU6 the chain's edit replaces by ReLU."""
        return tuple(p.producer for p in self.pairs if p.relu6)

    def evidence(self) -> str:
        lead = max(self.pairs, key=lambda p: p.spread)
        more = f"; {len(self.pairs)} such depthwise -> consumer pairs, equalized together" if len(self.pairs) > 1 else ""
        six = (f"; op(s) {', '.join(map(str, self.relu6))} end in ReLU6, which blocks the rescaling: DFQ replaces it by ReLU "
               "(a change of the float function, measured)") if self.relu6 else ""
        return lead.evidence() + more + six


def _channel_ranges(model: Model, op: int, position: int, axis: int) -> np.ndarray | None:
    ins = model.main.ops[op].inputs
    if position >= len(ins) or ins[position] < 0:
        return None
    data = model.tensor_data(model.main.tensors[ins[position]])
    if data is None:
        return None
    w = np.abs(np.asarray(data, np.float64))
    w = np.moveaxis(w, axis % w.ndim, -1)
    ranges: np.ndarray = w.reshape(-1, w.shape[-1]).max(axis=0)
    return ranges


def pair_cost(fm: Model, qm: Model, pairing: Pairing, producer: int, relu6: bool = False) -> PairCost | None:
    """The cost of a per-tensor depthwise producer's spread, None when it is not such a pair
    (`relu6`: a producer ending in ReLU6 counts, marked)."""
    sg = qm.main
    op = sg.ops[producer]
    if op.type != "DEPTHWISE_CONV_2D" or len(op.inputs) < 2:
        return None
    wq = sg.tensors[op.inputs[1]]
    if wq.dtype != "int8" or wq.quantization is None or len(wq.quantization.scales) != 1 or refusal(qm, producer, relu6) is not None:
        return None
    c = consumer_of(qm, producer, relu6)
    fp, fc = pairing.float_op_for(producer), pairing.float_op_for(c)
    if fp is None or fc is None:
        return None
    r = _channel_ranges(fm, fp, 1, -1)
    if r is None or r.size < 2 or r.max() <= 0:
        return None
    rc = _channel_ranges(fm, fc, 1, -1) if fm.main.ops[fc].type != "DEPTHWISE_CONV_2D" else None
    spread = float(r.max() / max(r.min(), 1e-30))
    amp = float(rc.max() / max(rc.min(), 1e-30)) if rc is not None and rc.size == r.size else 1.0
    return PairCost(producer, c, spread, 127.0 / spread, amp, activation(qm, producer) == RELU6)


def refused(fm: Model, qm: Model, pairing: Pairing, skip: tuple[int, ...] = ()) -> list[str]:
    """One line per per-tensor depthwise producer over spread channels that equalize refuses (a
    ReLU6 between the pair blocks the rescaling: DFQ replaces it by ReLU where the calibration data
    rarely reaches 6, `relu6_equalize`, which changes the float function); `skip`: producers a
    relu6_equalize chain takes (measured, or refused with its own reason, by the blame)."""
    out = []
    for op in qm.main.ops:
        if op.type != "DEPTHWISE_CONV_2D" or len(op.inputs) < 2 or op.index in skip or (why := refusal(qm, op.index)) is None:
            continue
        wq = qm.main.tensors[op.inputs[1]]
        fp = pairing.float_op_for(op.index)
        if wq.quantization is None or len(wq.quantization.scales) != 1 or fp is None:
            continue
        r = _channel_ranges(fm, fp, 1, -1)
        if r is None or r.size < 2 or r.max() <= 0 or (spread := float(r.max() / max(r.min(), 1e-30))) < SPREAD_MIN:
            continue
        out.append(f"op {op.index}'s per-tensor depthwise weights spread {spread:.0f}x over its channels, but {why}")
    return out


def dfq_chain(fm: Model, qm: Model, pairing: Pairing, relu6: bool = False) -> Chain | None:
    """Every per-tensor depthwise -> consumer pair whose depthwise weights spread SPREAD_MIN over
    their channels and whose consumer's input weights spread as much (it amplifies the small
    channels: the imbalance is in the depthwise output, on the consumer's input axis). A spread
    only in the depthwise weights, its output balanced (its input compensating), is per-channel
    weights' to fix (`weight_channels`), not equalize's: a planted 34x spread read 2x at the consumer.
    `relu6`: producers ending in ReLU6 join (the chain's edit is then relu6_equalize)."""
    pairs = []
    used: set[int] = set()
    for op in qm.main.ops:
        cost = pair_cost(fm, qm, pairing, op.index, relu6)
        if cost is not None and cost.spread >= SPREAD_MIN and cost.amplification >= SPREAD_MIN and not {cost.producer, cost.consumer} & used:
            pairs.append(cost)
            used |= {cost.producer, cost.consumer}
    return Chain(tuple(pairs)) if pairs else None
