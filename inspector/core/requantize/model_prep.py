"""Make a copy of a float model that litert-quantizer can work on, and say what was changed.

Traps found by running the quantizer on real-model constructs (each fix leaves a note):
- operator codes only in the legacy field (files written before the schema had `builtin_code`,
  typically older models without a signature): the quantizer reads `builtin_code`, which is then
  0 (ADD), so it quantizes every op as an ADD: conv weights asymmetric and conv biases int8, which
  the kernels refuse (`bias->type != kTfLiteInt32 (INT8 != INT32)`). The codes are copied into
  `builtin_code` in the copy.
- no signature: calibration is keyed by signature, so nothing is calibrated ("QSVs are required");
  a `serving_default` signature over subgraph 0's inputs and outputs is added.
- float16 weights behind DEQUANTIZE: the quantizer crashes ("'NoneType' object has no attribute
  'ndim'") or leaves them alone; they become float32 constants and the DEQUANTIZE ops go.
- sparse constants (block-sparse weights): the quantizer reshapes the stored values to the dense
  shape and fails; they are densified (and DENSIFY ops removed).
- duplicate tensor names: the quantizer requires names unique across all subgraphs; duplicates
  get a suffix in the copy.
- control flow (WHILE/IF): the calibrator only runs the signature's subgraph, so the bodies have
  no statistics and quantization fails; these ops (and the subgraphs they call) stay float.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.tflite import edit as fe
from inspector.core.tflite.dtypes import numpy_dtype_name
from inspector.core.tflite.op_facts import CONTROL_FLOW_OPS
from inspector.core.tflite.sparse_densify import DimLevel, densify

DEFAULT_SIGNATURE_KEY = "serving_default"


@dataclass
class PreparedModel:
    """The quantizer's input: bytes (the original bytes when nothing needed changing) and notes."""

    data: bytes
    notes: list[str] = field(default_factory=list)
    signature_added: bool = False
    renamed: dict[str, str] = field(default_factory=dict)
    keep_float_scopes: list[str] = field(default_factory=list)  # op scopes forced to stay float
    rewritten: bool = False  # True when `data` differs from the input bytes


def op_scope(output_names: list[str], input_names: list[str]) -> str:
    """The quantizer's op scope: output tensor names joined by ';' plus a trailing ';'."""
    names = [n for n in output_names if n] or [n for n in input_names if n]
    return ";".join(names) + (";" if names else "")


def prepare(data: bytes) -> PreparedModel:
    model = fe.read(data)
    prep = PreparedModel(data=data)
    _legacy_op_codes(model, prep)
    _float16_weights(model, prep)
    _densify_sparse(model, prep)
    _unique_names(model, prep)
    _add_signature(model, prep)
    _control_flow(model, prep)
    if prep.rewritten:
        fe.release_unused_buffers(model)
        prep.data = fe.write(model)
    return prep


def _legacy_op_codes(model: Any, prep: PreparedModel) -> None:
    stale = []
    for oc in model.operatorCodes:
        legacy, new = int(oc.deprecatedBuiltinCode), int(oc.builtinCode)
        if legacy != new and legacy < fe.PLACEHOLDER_FOR_GREATER_OP_CODES and legacy > new:
            oc.builtinCode = legacy
            stale.append(fe.OP_NAMES.get(legacy, f"BUILTIN_{legacy}"))
    if stale:
        prep.rewritten = True
        prep.notes.append(
            f"fixed: the model stores {len(stale)} operator code(s) ({', '.join(sorted(set(stale)))}) "
            "only in the legacy field (an older schema); the quantizer would read them as ADD and "
            "give conv biases int8 (which the kernels refuse), so the codes were copied into the "
            "current field in the working copy"
        )


def _float16_weights(model: Any, prep: PreparedModel) -> None:
    count = 0
    for sg in model.subgraphs:
        drop: set[int] = set()
        for i, op in enumerate(sg.operators):
            if fe.op_name(model, op) != "DEQUANTIZE":
                continue
            src = sg.tensors[op.inputs[0]]
            if src.type != schema.TensorType.FLOAT16:
                continue
            values = fe.constant_data(model, src)
            if values is None:
                continue
            out = sg.tensors[op.outputs[0]]
            if op.outputs[0] in list(sg.outputs if sg.outputs is not None else []):
                continue
            fe.set_buffer(model, out, values.astype(np.float32))
            out.type = schema.TensorType.FLOAT32
            drop.add(i)
            count += 1
        fe.remove_ops(sg, drop)
    if count:
        for si in range(len(model.subgraphs)):
            fe.drop_unused_tensors(model, si)
    if count:
        prep.rewritten = True
        prep.notes.append(
            f"converted {count} float16 weight tensor(s) behind DEQUANTIZE to float32 constants "
            "(the quantizer does not quantize float16 weights)"
        )


def _levels(sp: Any) -> list[DimLevel]:
    out = []
    for d in sp.dimMetadata:
        seg = None if d.arraySegments is None else np.asarray(d.arraySegments.values)
        idx = None if d.arrayIndices is None else np.asarray(d.arrayIndices.values)
        out.append(DimLevel(int(d.format), int(d.denseSize), seg, idx))
    return out


def _densify_sparse(model: Any, prep: PreparedModel) -> None:
    count = 0
    for sg in model.subgraphs:
        drop: set[int] = set()
        for t in sg.tensors:
            if t.sparsity is None:
                continue
            values = fe.constant_data(model, t)
            if values is None:
                continue
            sp = t.sparsity
            dense = densify(
                values,
                list(t.shape),
                list(sp.traversalOrder),
                list(sp.blockMap if sp.blockMap is not None else []),
                _levels(sp),
            )
            fe.set_buffer(model, t, dense)
            t.sparsity = None
            count += 1
        for i, op in enumerate(sg.operators):
            if fe.op_name(model, op) == "DENSIFY":
                src, out = sg.tensors[op.inputs[0]], sg.tensors[op.outputs[0]]
                values = fe.constant_data(model, src)
                if values is not None:
                    fe.set_buffer(
                        model,
                        out,
                        values.reshape(list(out.shape)).astype(
                            np.dtype(numpy_dtype_name(out.type))
                        ),
                    )
                    drop.add(i)
        fe.remove_ops(sg, drop)
        if drop:
            fe.drop_unused_tensors(model, model.subgraphs.index(sg))
    if count:
        prep.rewritten = True
        prep.notes.append(
            f"densified {count} sparse constant tensor(s) (the quantizer cannot read sparse weights)"
        )


def _unique_names(model: Any, prep: PreparedModel) -> None:
    seen: set[str] = set()
    for si, sg in enumerate(model.subgraphs):
        for ti, t in enumerate(sg.tensors):
            name = fe.tensor_name(t)
            if name in seen:
                new = f"{name}@sg{si}t{ti}"
                prep.renamed[new] = name
                t.name = new.encode()
                name = new
            seen.add(name)
    if prep.renamed:
        prep.rewritten = True
        prep.notes.append(
            f"renamed {len(prep.renamed)} duplicate tensor name(s) in the copy "
            "(the quantizer requires tensor names unique across subgraphs)"
        )


def _add_signature(model: Any, prep: PreparedModel) -> None:
    if model.signatureDefs:
        return
    sg = model.subgraphs[0]
    sig = schema.SignatureDefT()
    sig.signatureKey = DEFAULT_SIGNATURE_KEY.encode()
    sig.subgraphIndex = 0
    sig.inputs = _tensor_maps(sg, sg.inputs, "input")
    sig.outputs = _tensor_maps(sg, sg.outputs, "output")
    model.signatureDefs = [sig]
    prep.signature_added = prep.rewritten = True
    prep.notes.append(
        f"the model has no signature: added '{DEFAULT_SIGNATURE_KEY}' over subgraph 0 in the working "
        "copy (the quantizer calibrates by signature); the input file is unchanged"
    )


def _tensor_maps(sg: Any, indices: Any, prefix: str) -> list[Any]:
    maps, used = [], set()
    for k, ti in enumerate(list(indices if indices is not None else [])):
        name = fe.tensor_name(sg.tensors[ti]) or f"{prefix}_{k}"
        if name in used:
            name = f"{prefix}_{k}"
        used.add(name)
        tm = schema.TensorMapT()
        tm.name = name.encode()
        tm.tensorIndex = int(ti)
        maps.append(tm)
    return maps


def _control_flow(model: Any, prep: PreparedModel) -> None:
    for si, sg in enumerate(model.subgraphs):
        for i, op in enumerate(sg.operators):
            kind = fe.op_name(model, op)
            if kind not in CONTROL_FLOW_OPS:
                continue
            outs = [fe.tensor_name(sg.tensors[t]) for t in op.outputs if t >= 0]
            ins = [fe.tensor_name(sg.tensors[t]) for t in op.inputs if t >= 0]
            prep.keep_float_scopes.append(op_scope(outs, ins))
            prep.notes.append(
                f"kept float: {kind} op {i} in subgraph {si} and the subgraphs it calls "
                "(the quantizer cannot calibrate inside control flow)"
            )
