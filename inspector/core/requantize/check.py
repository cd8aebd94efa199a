"""Check a produced model: does LiteRT run it, and did each op get the treatment asked for?

The runtime check invokes the model once with the reference kernels (their error messages name
the failing node) and once with the default runtime (XNNPACK), which fails on some models the
reference kernels accept. Failures are turned into one plain sentence naming the op.

A model whose custom op only the XNNPACK delegate provides (MediaPipe's
`Convolution2DTransposeBias`, `MaxPoolingWithArgmax2D`, `MaxUnpooling2D`) cannot run on the
reference kernels at all; `delegate_only_custom_ops` finds that out, and such a model is checked
with XNNPACK alone (the quantizer calibrates with XNNPACK too).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.requantize.plan import Selection
from inspector.core.tflite import edit as fe
from inspector.core.tflite.dtypes import numpy_dtype_name
from inspector.core.tflite.op_facts import BOUNDARY_OPS, WEIGHTED_OPS

_NODE = re.compile(r"Node number (\d+) \(([^)]*)\) failed to (prepare|invoke)")


@dataclass(frozen=True)
class RuntimeProblem:
    """Why the runtime refused a model: plain words, the op (if known) and a fix kind."""

    message: str
    op_index: int | None
    fix: str | None  # "symmetric_weights" when requantizing weights symmetrically can help
    runtime: str
    raw: str
    subgraph: int  # the subgraph `op_index` counts in (the signature run's)


def _invoke(data: bytes, feed: dict[str, np.ndarray], signature: str | None, resolver: Any) -> None:
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=data, experimental_op_resolver_type=resolver, num_threads=1)
    if signature is not None:
        runner = it.get_signature_runner(signature)
        details = runner.get_input_details()
        args = {
            k: np.asarray(feed[k], dtype=details[k]["dtype"])
            if k in feed
            else np.zeros(details[k]["shape"], details[k]["dtype"])
            for k in details
        }
        runner(**args)
    else:
        it.allocate_tensors()
        it.invoke()


REFERENCE = "reference kernels"
XNNPACK = "default runtime (XNNPACK)"
BOTH_RUNTIMES = (REFERENCE, XNNPACK)


def run_check(
    data: bytes,
    feed: dict[str, np.ndarray],
    signature: str | None,
    runtimes: tuple[str, ...] = BOTH_RUNTIMES,
) -> RuntimeProblem | None:
    """None when the model loads and runs once under each runtime; the problem otherwise."""
    from ai_edge_litert.interpreter import OpResolverType

    resolvers = {
        REFERENCE: OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        XNNPACK: OpResolverType.AUTO,
    }
    for label in runtimes:
        resolver = resolvers[label]
        try:
            _invoke(data, feed, signature, resolver)
        except Exception as e:  # the interpreter raises RuntimeError/ValueError with kernel text
            return explain(str(e), data, label, _signature_subgraph(data, signature))
    return None


def _signature_subgraph(data: bytes, signature: str | None) -> int:
    """The subgraph a signature runner prepares and runs (its node numbers count there)."""
    if signature is None:
        return 0
    try:
        sigs = fe.read(data).signatureDefs or []
    except Exception:  # noqa: BLE001 - only for naming the op in the message
        return 0
    return next((int(s.subgraphIndex) for s in sigs if (s.signatureKey or b"").decode() == signature), 0)


def delegate_only_custom_ops(
    data: bytes, feed: dict[str, np.ndarray], signature: str | None, problem: RuntimeProblem
) -> list[str] | None:
    """The custom ops only XNNPACK provides, when `problem` (the reference kernels refusing a
    custom op) goes away under XNNPACK alone; None when it does not."""
    if problem.runtime != REFERENCE or "unresolved custom op" not in problem.raw.lower():
        return None
    if run_check(data, feed, signature, (XNNPACK,)) is not None:
        return None
    model = fe.read(data)
    return sorted(
        {
            fe.op_name(model, op)
            for sg in model.subgraphs
            for op in sg.operators
            if fe.op_code(model, op) == schema.BuiltinOperator.CUSTOM
        }
    )


def explain(raw: str, data: bytes, runtime: str, subgraph: int) -> RuntimeProblem:
    """Turn an interpreter error into a sentence naming the op (of `subgraph`) and the reason."""
    text = " ".join(raw.split())
    m = _NODE.search(text)
    op_index, where = None, "the model"
    if m:
        op_index = int(m.group(1))
        where = f"op {op_index} ({m.group(2)})" + (f" of subgraph {subgraph}" if subgraph else "")
        try:
            model = fe.read(data)
            sg = model.subgraphs[subgraph]
            ops = sg.operators
            if op_index < len(ops):
                out = ops[op_index].outputs
                if len(out):
                    where += f", output '{fe.tensor_name(sg.tensors[out[0]])}'"
        except Exception:
            pass
    fix = None
    low = text.lower()
    if "zero_point" in low and "!= 0" in low:
        reason = "its quantized weights have non-zero zero points, but the kernel requires symmetric weights (zero point 0)"
        fix = "symmetric_weights"
    elif "unresolved custom op" in low:
        name = re.search(r"custom op: ([^\s.]+)", text)
        reason = f"it is a custom op ({name.group(1) if name else '?'}) that this LiteRT runtime does not provide"
    elif "didn't find op for builtin opcode" in low:
        reason = "this LiteRT runtime has no kernel for that op type/version"
    elif "not supported" in low or "unsupported" in low:
        detail = re.search(r"[^.]*(?:not supported|unsupported)[^.]*", text, re.IGNORECASE)
        reason = f"the kernel does not support this tensor type combination ({detail.group(0).strip() if detail else text[:120]})"
    elif "tensor data is null" in low:
        reason = "a signature input/output names a tensor the runtime does not keep"
    elif "no_integer_overflow_from_quantization" in low:
        reason = (
            "its output scale is so small that the activation clamp overflows int32 "
            f"(a range that hardly left 0 during calibration; kernel: {_kernel_line(text)})"
        )
    elif "bias->type" in low:
        reason = f"its bias has the wrong integer type (kernel: {_kernel_line(text)})"
    else:
        reason = text[:300]
    return RuntimeProblem(f"the {runtime} refused {where}: {reason}", op_index, fix, runtime, text, subgraph)


def _kernel_line(text: str) -> str:
    """The kernel's own words, without the 'Node number ... failed' tail."""
    return text.split("Node number")[0].strip() or text[:200]


@dataclass(frozen=True)
class OpCheck:
    """Requested vs observed treatment of one selected op in the produced model."""

    op: str
    requested: str
    observed: str
    ok: bool


def _dtype(t: Any) -> str:
    return numpy_dtype_name(t.type)


def observed_treatments(data: bytes) -> dict[tuple[str, ...], str]:
    """Treatment of every op of the produced model, keyed by its output tensor names."""
    model = fe.read(data)
    out: dict[tuple[str, ...], str] = {}
    for sg in model.subgraphs:
        producers = {int(o): op for op in sg.operators for o in op.outputs}
        for op in sg.operators:
            names = tuple(fe.tensor_name(sg.tensors[i]) for i in op.outputs if i >= 0)
            if names:
                out[names] = _observe(model, sg, op, producers)
    return out


def _observe(model: Any, sg: Any, op: Any, producers: dict[int, Any]) -> str:
    kind = fe.op_name(model, op)
    if kind in BOUNDARY_OPS:
        return "convert"
    ins = [sg.tensors[i] for i in op.inputs if i >= 0]
    outs = [sg.tensors[i] for i in op.outputs if i >= 0]
    acts = [_dtype(t) for t in outs if _dtype(t) in ("float32", "int8", "int16")]
    if not acts:
        acts = [
            _dtype(t)
            for t in ins
            if fe.constant_data(model, t) is None and _dtype(t) in ("float32", "int8", "int16")
        ]
    act = acts[0] if acts else "other"
    if (kind in WEIGHTED_OPS or kind == "EMBEDDING_LOOKUP") and len(op.inputs) > 1:  # weights at input 1
        w_index = int(op.inputs[1])
        w = sg.tensors[w_index]
        granularity = _granularity(w)
        if _dtype(w) in ("int8", "int4"):
            base = {"int8": "int8", "int16": "a16w8"}.get(act, "dynamic")
            return f"{base} ({granularity})"
        src = producers.get(w_index)
        if src is not None and fe.op_name(model, src) == "DEQUANTIZE":
            qw = sg.tensors[src.inputs[0]]
            return f"weight_only_{_dtype(qw)} ({_granularity(qw)})"
        return "keep_float"
    return {"float32": "float", "int8": "int8", "int16": "a16w8"}.get(act, "other")


def check_selections(
    data: bytes, selections: dict[tuple[int, int], Selection], new_names: dict[str, str]
) -> list[OpCheck]:
    observed = observed_treatments(data)
    checks = []
    for sel in selections.values():
        key = tuple(new_names.get(n, n) for n in sel.op.output_names)
        got = observed.get(key)
        if got is None:  # the op may have been merged or renamed: look for any output name
            got = next((v for k, v in observed.items() if set(k) & set(key)), "missing")
        checks.append(OpCheck(sel.op.label, _requested(sel), got, _matches(_requested(sel), got)))
    return checks


def _requested(sel: Selection) -> str:
    if sel.treatment == "keep_float":
        return "keep_float"
    return f"{sel.treatment} ({'per-channel' if sel.per_channel else 'per-tensor'})"


def _matches(requested: str, observed: str) -> bool:
    """Weight ops show treatment and granularity; other ops only their activation type."""
    if requested == observed:
        return True
    if observed == "float":  # an op without weights computing in float
        return requested.startswith(("keep_float", "dynamic", "weight_only"))
    return requested.split(" ")[0] == observed


def _granularity(tensor: Any) -> str:  # a schema TensorT
    """'per-channel' when an (object-API) tensor has more than one scale, else 'per-tensor'."""
    q = tensor.quantization
    return "per-channel" if q is not None and q.scale is not None and len(q.scale) > 1 else "per-tensor"

