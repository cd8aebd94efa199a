"""The shared context of a surgical edit: model B's object (edited in place), model A, the pairing.

Edits of tensors and buffers change them where they are (indices stay). Edits that replace ops
register a replacement list per B op index; `rebuild_ops` then splices the new op lists in once,
drops tensors nothing refers to any more and empties the buffers nobody uses (buffer indices
stay, so every untouched tensor keeps its buffer and bytes).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.compare.equalized import reference_weights
from inspector.core.compare.pairing import Pairing
from inspector.core.errors import InputError
from inspector.core.tflite import edit as fe
from inspector.core.tflite.model import Model

FLOAT32 = schema.TensorType.FLOAT32


@dataclass
class Surgery:
    bm: Any  # schema.ModelT of B, edited in place
    am: Any  # schema.ModelT of A, read only
    fm: Model
    qm: Model
    pairing: Pairing
    replacements: dict[int, list[Any]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    equalized: list[dict[str, Any]] = field(default_factory=list)  # one record per equalized pair (`equalize.py`)
    interface_changes: list[dict[str, Any]] = field(default_factory=list)  # one per widened model input (`input_range`)
    float_changes: list[Any] = field(default_factory=list)  # `relu6.FloatChange` of a relu6_equalize (ReLU6 -> ReLU)

    @property
    def bsg(self) -> Any:
        """B's subgraph being edited: the chosen signature's (`qm.main`), subgraph 0 by default."""
        return self.bm.subgraphs[self.qm.main.index]

    @property
    def asg(self) -> Any:
        return self.am.subgraphs[self.fm.main.index]

    def describe(self, op_index: int) -> str:
        op = self.qm.main.ops[op_index]
        outs = [self.qm.main.tensors[o].name for o in op.outputs if o >= 0]
        return f"op {op_index} ({op.type}, '{outs[0] if outs else '?'}')"

    def float_op(self, op_index: int) -> int:
        """A's op paired with B's op `op_index` (InputError when there is none)."""
        f = self.pairing.float_op_for(op_index)
        if f is None:
            raise InputError(f"{self.describe(op_index)} has no float counterpart in the float model", self.qm.path)
        if self.fm.main.ops[f].type != self.qm.main.ops[op_index].type:
            raise InputError(f"{self.describe(op_index)} is paired with a {self.fm.main.ops[f].type} op in the float model", self.qm.path)
        return f

    def float_constant(self, op_index: int, position: int) -> np.ndarray | None:
        """A's constant at input `position` of the op paired with B's `op_index` (float values)."""
        f = self.float_op(op_index)
        ins = self.fm.main.ops[f].inputs
        if position >= len(ins) or ins[position] < 0:
            return None
        t = self.fm.main.tensors[ins[position]]
        data = self.fm.tensor_data(t)
        if data is None:
            return None
        if t.dtype != "float32":
            raise InputError(f"{self.describe(op_index)}: the float model's input {position} is {t.dtype}, not float32", self.fm.path)
        return self._as_equalized(op_index, position, np.asarray(data, np.float32).reshape(t.shape))

    def b_constant(self, op_index: int, tensor: Any) -> np.ndarray:
        """The stored values of B's `tensor`, a constant its op `op_index` reads (InputError when
        it holds none)."""
        data = fe.constant_data(self.bm, tensor)
        if data is None:
            raise InputError(f"{self.describe(op_index)}: tensor '{fe.tensor_name(tensor)}' holds no constant values", self.qm.path)
        return data

    def _as_equalized(self, op_index: int, position: int, values: np.ndarray) -> np.ndarray:
        """A's constant as an earlier equalization of B left it (`compare/equalized.py`): an edit
        of an equalized P or C starts from the weights B's function is built on."""
        ins = self.qm.main.ops[op_index].inputs
        return reference_weights(self.qm, ins[position] if position < len(ins) and ins[position] >= 0 else None, values)

    # -- graph building -------------------------------------------------------------------
    def opcode(self, code: int, version: int) -> int:
        """Index of a builtin operator code in B (appended when missing)."""
        for i, oc in enumerate(self.bm.operatorCodes):
            if max(int(oc.builtinCode), int(oc.deprecatedBuiltinCode)) == code and int(oc.version) == version and not oc.customCode:
                return i
        oc = schema.OperatorCodeT()
        oc.builtinCode = code
        oc.deprecatedBuiltinCode = min(code, fe.PLACEHOLDER_FOR_GREATER_OP_CODES)
        oc.version = version
        self.bm.operatorCodes.append(oc)
        return len(self.bm.operatorCodes) - 1

    def opcode_from_a(self, a_op: Any) -> int:
        a_oc = self.am.operatorCodes[a_op.opcodeIndex]
        for i, oc in enumerate(self.bm.operatorCodes):
            if (int(oc.builtinCode), int(oc.deprecatedBuiltinCode), oc.customCode, int(oc.version)) == (
                int(a_oc.builtinCode), int(a_oc.deprecatedBuiltinCode), a_oc.customCode, int(a_oc.version)
            ):  # fmt: skip
                return i
        self.bm.operatorCodes.append(copy.deepcopy(a_oc))
        return len(self.bm.operatorCodes) - 1

    def add_tensor(self, like: Any, name: str, dtype: int, quantization: Any = None) -> int:
        t = copy.deepcopy(like)
        t.name = name.encode()
        t.type = dtype
        t.quantization = quantization
        t.buffer = 0
        t.isVariable = False
        self.bsg.tensors.append(t)
        return len(self.bsg.tensors) - 1

    def add_constant(self, like: Any, name: str, dtype: int, values: np.ndarray, quantization: Any = None) -> int:
        t = copy.deepcopy(like)
        t.name = name.encode()
        t.type = dtype
        t.quantization = quantization
        t.shape = list(values.shape) if values.ndim else []
        t.shapeSignature = None
        t.sparsity = None
        buf = schema.BufferT()
        buf.data = np.frombuffer(np.ascontiguousarray(values).tobytes(), dtype=np.uint8).copy()
        self.bm.buffers.append(buf)
        t.buffer = len(self.bm.buffers) - 1
        self.bsg.tensors.append(t)
        return len(self.bsg.tensors) - 1

    def copy_a_constant(self, a_tensor_index: int, b_op: int | None = None, position: int = 0) -> int:
        """A's constant as a new constant of B (`b_op`, `position`: the B op and input it feeds,
        so an equalized P's or C's weights come as B's equalization left them)."""
        at = self.asg.tensors[a_tensor_index]
        data = fe.constant_data(self.am, at)
        if data is None:
            raise InputError(f"float tensor '{fe.tensor_name(at)}' has no data to copy", self.fm.path)
        name = fe.tensor_name(at)
        if any(fe.tensor_name(t) == name for t in self.bsg.tensors):
            name += "/from_float_model"  # B may use the name for another (untouched) tensor
        values = np.asarray(data).reshape(list(at.shape) or ())
        if b_op is not None:
            values = self._as_equalized(b_op, position, values)
        return self.add_constant(at, name, at.type, values, copy.deepcopy(at.quantization))

    def new_op(self, opcode_index: int, inputs: list[int], outputs: list[int], like: Any = None) -> Any:
        op = copy.deepcopy(like) if like is not None else schema.OperatorT()
        op.opcodeIndex = opcode_index
        op.inputs = list(inputs)
        op.outputs = list(outputs)
        if like is None:
            op.builtinOptionsType = 0
            op.builtinOptions = None
        return op

    def is_output(self, tensor: int) -> bool:
        """Is `tensor` an output of the edited subgraph or of a signature over it?"""
        if tensor in list(self.bsg.outputs):
            return True
        return any(
            s.subgraphIndex == self.qm.main.index and any(int(m.tensorIndex) == tensor for m in (s.outputs or []))
            for s in self.bm.signatureDefs or []
        )

    def consumed_outside(self, tensor: int, selected: set[int]) -> bool:
        """Does anything other than the ops in `selected` read `tensor` (ops, graph/signature outputs)?"""
        return self.is_output(tensor) or any(i not in selected for i in fe.consumers(self.bsg, tensor))

    def only_dequantized(self, tensor: int, selected: set[int]) -> tuple[int, int] | None:
        """(DEQUANTIZE op, its float32 output) when that op is the one reader of `tensor` outside
        `selected` and `tensor` is no graph or signature output; else None."""
        if self.is_output(tensor):
            return None
        outside = [i for i in fe.consumers(self.bsg, tensor) if i not in selected]
        if len(outside) != 1 or self.qm.main.ops[outside[0]].type != "DEQUANTIZE":
            return None
        d = int(self.bsg.operators[outside[0]].outputs[0])
        return (outside[0], d) if self.bsg.tensors[d].type == FLOAT32 else None

    def rebuild_ops(self) -> None:
        if not self.replacements:
            return
        new: list[Any] = []
        for i, op in enumerate(self.bsg.operators):
            new += self.replacements.get(i, [op])
        self.bsg.operators = new
        self.replacements = {}
        fe.drop_unused_tensors(self.bm, self.qm.main.index)
        fe.release_unused_buffers(self.bm)


def quant_t(scales: np.ndarray, zero_points: np.ndarray, dim: int = 0) -> Any:
    q = schema.QuantizationParametersT()
    q.scale = [float(s) for s in np.atleast_1d(scales)]
    q.zeroPoint = [int(z) for z in np.atleast_1d(zero_points)]
    q.quantizedDimension = int(dim)
    return q
