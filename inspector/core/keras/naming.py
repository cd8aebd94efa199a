"""Pairing Keras layers with a converted model's tensors by the names the converter gives them.

The converter names a tensor after the TF ops fused into it, each with its Keras layer in the
path: `model/quant_dense_1/MatMul;model/quant_dense_1/Relu;...`. A tensor is owned by the last
Keras layer (in the model's layer order) it names: Conv2D -> BatchNormalization -> ReLU fused
into one CONV_2D output belongs to the ReLU layer, and the Conv2D and BatchNormalization layers
are "fused into" it (their own outputs do not exist in the TFLite model). A layer pairs with
the last tensor it owns in execution order, so a Dense with a fused softmax pairs with the
tensor after SOFTMAX. When the activation's output carries no layer name (the converter names a
graph output after the signature, `StatefulPartitionedCall:01`), the layer follows its tensor
through that activation op all the same.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import FOLLOWED_ACTIVATION_OPS


@dataclass(frozen=True)
class TensorRef:
    op_index: int
    op_type: str
    tensor: int
    name: str


@dataclass
class LayerPairing:
    paired: dict[str, TensorRef] = field(default_factory=dict)  # layer -> its output tensor in B
    named_in: dict[str, list[TensorRef]] = field(default_factory=dict)  # layer -> every op output naming it
    fused_into: dict[str, str] = field(default_factory=dict)  # layer -> the layer owning its tensors


def layers_named(tensor_name: str, layer_names: set[str]) -> set[str]:
    """The Keras layer names that appear as a path component of the tensor's name."""
    found: set[str] = set()
    for part in tensor_name.split(";"):
        comps = part.split("/")
        found.update(c for c in comps[:-1] if c in layer_names)
    return found


def pair_layers(layer_order: Sequence[str], qm: Model) -> LayerPairing:
    """Pair the layers in `layer_order` (the Keras model's layer order) with `qm`'s main subgraph."""
    pos = {n: i for i, n in enumerate(layer_order)}
    names = set(layer_order)
    out = LayerPairing()
    sg = qm.main
    owner_of: dict[int, str] = {}
    for op in sg.ops:
        for t in op.outputs:
            if t < 0:
                continue
            tensor = sg.tensors[t]
            carried = layers_named(tensor.name, names)
            if not carried:
                continue
            ref = TensorRef(op.index, op.type, t, tensor.name)
            for n in carried:
                out.named_in.setdefault(n, []).append(ref)
            owner = max(carried, key=pos.__getitem__)
            owner_of[t] = owner
            out.paired[owner] = ref  # the last one in execution order wins
    consumers = sg.consumers()
    for n, ref in list(out.paired.items()):
        while True:
            users = consumers.get(ref.tensor, [])
            if len(users) != 1 or users[0].type not in FOLLOWED_ACTIVATION_OPS or not users[0].outputs:
                break
            t = users[0].outputs[0]
            if layers_named(sg.tensors[t].name, names):
                break  # named: it belongs to whichever layer it names
            ref = TensorRef(users[0].index, users[0].type, t, sg.tensors[t].name)
        out.paired[n] = ref
    for n, refs in out.named_in.items():
        if n not in out.paired:
            out.fused_into[n] = owner_of[refs[-1].tensor]
    return out
