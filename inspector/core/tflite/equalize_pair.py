"""Which producer/consumer pairs cross-layer equalization (`requantize/equalize.py`) accepts, from
the quantized model's graph alone (here, low in core, so the diagnosis can ask too).

P is a CONV_2D, DEPTHWISE_CONV_2D or FULLY_CONNECTED op whose fused activation is none or ReLU
(positively homogeneous: ReLU6 and the others are not), whose int8 per-tensor output is no model
output and has exactly one reader C, itself one of those op types, reading it as its input (not
its weights) channel by channel. Light: no runtime imports, so the plan and the GUI can ask.
`consumer_of` raises InputError with the reason; `refusal` returns it (None: the pair is fine).
With `relu6=True` (the `relu6_equalize` edit, DFQ's recipe) a producer ending in ReLU6 is
accepted too: the edit replaces its ReLU6 by ReLU first (`requantize/relu6.py`).
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.errors import InputError
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import EQUALIZE_OPS, WEIGHTED_OPS

HOMOGENEOUS = ("NONE", "RELU")  # f(s·x) = s·f(x) for s > 0
RELU6 = "RELU6"  # not homogeneous; `relu6_equalize` replaces it by RELU (a change of the float function)


def activation(qm: Model, op: int) -> str:
    """The fused activation of B's op `op` ("NONE" without one)."""
    return str(qm.main.ops[op].options.get("fused_activation_function", "NONE"))


def _graph_outputs(qm: Model) -> set[int]:
    sg = qm.main
    outs = set(sg.outputs)
    for sig in qm.signatures:
        if sig.subgraph == sg.index:
            outs |= set(sig.outputs.values())
    return outs


def _name(qm: Model, i: int) -> str:
    op = qm.main.ops[i]
    outs = [qm.main.tensors[o].name for o in op.outputs if o >= 0]
    return f"op {i} ({op.type}, '{outs[0] if outs else '?'}')"


def consumer_of(qm: Model, producer: int, relu6: bool = False) -> int:
    """The one consumer C of `producer` that equalization pairs it with; InputError with the
    reason when P or its consumers do not allow it (`relu6`: a ReLU6 producer is allowed)."""
    sg = qm.main
    if not 0 <= producer < len(sg.ops):
        raise InputError(f"op:{producer}: the quantized model has only {len(sg.ops)} ops", qm.path)
    op = sg.ops[producer]
    what = f"equalize: {_name(qm, producer)}"
    if op.type not in EQUALIZE_OPS:
        raise InputError(f"{what} is not a conv, depthwise conv or fully connected op", qm.path)
    act = str(op.options.get("fused_activation_function", "NONE"))
    if act not in HOMOGENEOUS and not (relu6 and act == RELU6):
        raise InputError(f"{what} ends in {act}, which is not positively homogeneous (only none or RELU can be equalized)", qm.path)
    out = op.outputs[0]
    t = sg.tensors[out]
    if t.dtype != "int8" or t.quantization is None or t.quantization.per_channel:
        raise InputError(f"{what}: its output is not a per-tensor int8 tensor", qm.path)
    if out in _graph_outputs(qm):
        raise InputError(f"{what}: its output is a model output, so it has no consumer to take the scales", qm.path)
    readers = sg.readers(out)
    if len(readers) != 1:
        raise InputError(f"{what}: its output has {len(readers)} consumers; equalization needs exactly one", qm.path)
    c = readers[0]
    if c.type not in EQUALIZE_OPS:
        raise InputError(f"{what}: its consumer {_name(qm, c.index)} is not a conv, depthwise conv or fully connected op", qm.path)
    if c.inputs[0] != out or out in c.inputs[1:]:
        raise InputError(f"{what}: its consumer {_name(qm, c.index)} reads it as weights, not as its input", qm.path)
    channels = t.shape[-1] if t.shape else 0
    wc = sg.tensors[c.inputs[1]]
    per_group = _consumer_group(c.type, wc.shape, channels)
    if per_group is None:
        raise InputError(f"{what}: its consumer {_name(qm, c.index)} does not read its {channels} channels one by one "
                         f"(weights {list(wc.shape)})", qm.path)  # fmt: skip
    for i in (producer, c.index):
        o = sg.ops[i]
        if sg.tensors[o.inputs[1]].dtype != "int8" or not sg.tensors[o.inputs[1]].is_constant:
            raise InputError(f"equalize: {_name(qm, i)}: its weights are not int8 constants", qm.path)
        if sg.tensors[o.inputs[0]].dtype != "int8":
            raise InputError(f"equalize: {_name(qm, i)}: its input is not int8", qm.path)
    return c.index


def refusal(qm: Model, producer: int, relu6: bool = False) -> str | None:
    """Why `producer` cannot be equalized (None: it can); `relu6`: as `relu6_equalize` would."""
    try:
        consumer_of(qm, producer, relu6)
    except InputError as e:
        return e.message
    return None


def _consumer_group(c_type: str, shape: Sequence[int], channels: int) -> int | None:
    """Weight columns per input channel of the consumer (depthwise multiplier; 1 for conv / FC),
    or None when the consumer's weights do not read `channels` input channels."""
    roles = WEIGHTED_OPS.get(c_type) if c_type in EQUALIZE_OPS else None
    dim = roles.input_dim if roles is not None else None
    if roles is None or dim is None or channels <= 0 or len(shape) != dim + 1:
        return None
    if roles.grouped:  # depthwise: `multiplier` columns per input channel
        return shape[dim] // channels if shape[dim] % channels == 0 else None
    return 1 if shape[dim] == channels else None
