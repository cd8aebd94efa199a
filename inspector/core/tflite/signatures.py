"""Signatures of a model (prefill / decode style entry points) and choosing one to compare.

A signature names a subgraph and its inputs and outputs. Choosing one makes that subgraph the
model's `main` (see `Model.for_signature`), so pairing, sample feeding and running all address
it; tensor indices are that subgraph's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from inspector.core.errors import InputError
from inspector.core.tflite.model import Model, Subgraph

# One input or output as a chooser lists it: (name, shape signature, dtype).
Port = tuple[str, tuple[int, ...], str]


@dataclass(frozen=True, slots=True)
class SignatureInfo:
    """What a chooser shows: key, subgraph, input and output names with their shapes."""

    key: str
    subgraph: int
    inputs: tuple[Port, ...]
    outputs: tuple[Port, ...]

    def to_json(self) -> dict[str, Any]:
        def side(items: tuple[Port, ...]) -> list[dict[str, Any]]:
            return [{"name": n, "shape": list(s), "dtype": d} for n, s, d in items]

        return {"key": self.key, "subgraph": self.subgraph, "inputs": side(self.inputs), "outputs": side(self.outputs)}


def list_signatures(model: Model) -> tuple[SignatureInfo, ...]:
    """Every signature of the model, in file order (empty for a model without any)."""
    out = []
    for sig in model.signatures:
        if not 0 <= sig.subgraph < len(model.subgraphs):
            continue
        sg = model.subgraphs[sig.subgraph]

        def side(m: dict[str, int], sg: Subgraph = sg) -> tuple[Port, ...]:
            return tuple(
                (name, sg.tensors[t].shape_signature, sg.tensors[t].dtype)
                for name, t in m.items()
                if 0 <= t < len(sg.tensors)
            )

        out.append(SignatureInfo(sig.key, sig.subgraph, side(sig.inputs), side(sig.outputs)))
    return tuple(out)


def entry_info(model: Model) -> SignatureInfo:
    """What the comparison feeds and reads of `model` as seen (its `main`): the chosen
    signature's inputs/outputs, else the subgraph's by tensor name (key '' for none)."""
    key = model.signature_key
    for info in list_signatures(model):
        if info.key == key or (key is None and info.subgraph == model.main.index):
            return info
    sg = model.main

    def side(ids: tuple[int, ...]) -> tuple[Port, ...]:
        return tuple((sg.tensors[t].name, sg.tensors[t].shape_signature, sg.tensors[t].dtype) for t in ids if 0 <= t < len(sg.tensors))

    return SignatureInfo("", sg.index, side(sg.inputs), side(sg.outputs))


def has_dynamic_inputs(info: SignatureInfo, beyond_batch: bool = False) -> bool:
    """Whether an input has a dynamic dimension (-1 in its shape signature; with `beyond_batch`,
    other than the leading one most converted models have): it runs with the samples' shape."""
    return any(d < 0 for _, shape, _ in info.inputs for d in (shape[1:] if beyond_batch else shape))


def select_signature(model: Model, key: str | None) -> Model:
    """`model` seen through signature `key` (None: the model as is, subgraph 0).

    An unknown key raises InputError naming the file and the available keys.
    """
    if key is None:
        return model
    try:
        return model.for_signature(key)
    except KeyError:
        keys = [s.key for s in model.signatures]
        have = f"the model has {', '.join(repr(k) for k in keys)}" if keys else "the model has no signatures"
        raise InputError(f"no signature '{key}': {have}", model.path) from None


__all__ = ["SignatureInfo", "entry_info", "has_dynamic_inputs", "list_signatures", "select_signature"]
