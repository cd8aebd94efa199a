"""Does a model keep state across `invoke()`? (DESIGN: stateful models)

Two kinds of state persist in a LiteRT interpreter from one invoke to the next:
- variable tensors (`is_variable`): the fused UNIDIRECTIONAL_SEQUENCE_LSTM / RNN ops keep their
  hidden and cell state in them; `ResetVariableTensors` zeroes them (the zero point for int8);
- resource variables (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE): their initial values are
  assigned by the init subgraph a CALL_ONCE op runs once per interpreter. `ResetVariableTensors`
  does not touch them; invoking that init subgraph again assigns the initial values again.

Independent samples need both reset before every sample (`ModelRunner` does it); a model meant to
carry state across samples (streaming) is run with the samples in order and one reset at the start.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import STATEFUL_OPS


@dataclass(frozen=True)
class ModelState:
    variables: tuple[tuple[int, int], ...]  # (subgraph, tensor) of every variable tensor
    ops: tuple[str, ...]  # the op types that hold or need the state (sorted, distinct)
    init_subgraphs: tuple[int, ...]  # what CALL_ONCE runs: invoked again to reset resource variables

    def describe(self) -> str:
        """E.g. "2 variable tensors (UNIDIRECTIONAL_SEQUENCE_LSTM)"."""
        parts = []
        if self.variables:
            n = len(self.variables)
            parts.append(f"{n} variable tensor{'s' if n != 1 else ''}")
        resource = [t for t in self.ops if t in STATEFUL_OPS]
        if resource:
            parts.append("resource variables")
        held = [t for t in self.ops if t not in STATEFUL_OPS]
        return " and ".join(parts) + (f" ({', '.join(held)})" if held else "")


def model_state(model: Model) -> ModelState | None:
    """The state `model` keeps across invoke() (any subgraph), or None when it keeps none."""
    variables = tuple((sg.index, t.index) for sg in model.subgraphs for t in sg.tensors if t.is_variable)
    var_set = set(variables)
    ops: set[str] = set()
    inits: set[int] = set()
    for sg in model.subgraphs:
        for op in sg.ops:
            if op.type in STATEFUL_OPS:
                ops.add(op.type)
                init = (op.options or {}).get("init_subgraph_index")
                if op.type == "CALL_ONCE" and init is not None:
                    inits.add(int(init))
            elif any((sg.index, i) in var_set for i in op.inputs if i >= 0):
                ops.add(op.type)
    if not variables and not (ops & STATEFUL_OPS):
        return None
    return ModelState(variables, tuple(sorted(ops)), tuple(sorted(inits)))


def state_note(models: tuple[Model, ...], carry_state: bool = False) -> str:
    """What a run of `models` does with their state, for the output ("" when none keeps any)."""
    state = next((s for s in map(model_state, models) if s is not None), None)
    if state is None:
        return ""
    how = ("state carried from sample to sample in order, reset once at the start (streaming)" if carry_state
           else "state reset before every sample")  # fmt: skip
    return f"stateful model ({state.describe()}): {how}"
