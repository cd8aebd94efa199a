"""Check a produced model: does LiteRT run it, and did each op get the treatment asked for?

The runtime check invokes the model once with the reference kernels (their error messages name
the failing node) and once with the default runtime (XNNPACK), which fails on some models the
reference kernels accept. Failures are turned into one plain sentence naming the op.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core import flatbuffer_edit as fe
from inspector.core.dtypes import numpy_dtype_name
from inspector.core.requant_plan import Selection

_NODE = re.compile(r"Node number (\d+) \(([^)]*)\) failed to (prepare|invoke)")


@dataclass(frozen=True)
class RuntimeProblem:
    """Why the runtime refused a model: plain words, the op (if known) and a fix kind."""

    message: str
    op_index: int | None
    fix: str | None  # "symmetric_weights" when requantizing weights symmetrically can help
    runtime: str
    raw: str


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


def run_check(
    data: bytes, feed: dict[str, np.ndarray], signature: str | None
) -> RuntimeProblem | None:
    """None when the model loads and runs once under both runtimes; the problem otherwise."""
    from ai_edge_litert.interpreter import OpResolverType

    for label, resolver in (
        ("reference kernels", OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES),
        ("default runtime (XNNPACK)", OpResolverType.AUTO),
    ):
        try:
            _invoke(data, feed, signature, resolver)
        except Exception as e:  # the interpreter raises RuntimeError/ValueError with kernel text
            return explain(str(e), data, label)
    return None


def explain(raw: str, data: bytes, runtime: str) -> RuntimeProblem:
    """Turn an interpreter error into a sentence naming the op and the reason."""
    text = " ".join(raw.split())
    m = _NODE.search(text)
    op_index, where = None, "the model"
    if m:
        op_index = int(m.group(1))
        where = f"op {op_index} ({m.group(2)})"
        try:
            model = fe.read(data)
            ops = model.subgraphs[0].operators
            if op_index < len(ops):
                out = ops[op_index].outputs
                if len(out):
                    where += f", output '{fe.tensor_name(model.subgraphs[0].tensors[out[0]])}'"
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
    else:
        reason = text[:300]
    return RuntimeProblem(f"the {runtime} refused {where}: {reason}", op_index, fix, runtime, text)


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
    if kind in ("QUANTIZE", "DEQUANTIZE"):
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
    if (
        kind
        in (
            "CONV_2D",
            "DEPTHWISE_CONV_2D",
            "FULLY_CONNECTED",
            "TRANSPOSE_CONV",
            "BATCH_MATMUL",
            "EMBEDDING_LOOKUP",
        )
        and len(op.inputs) > 1
    ):
        w_index = int(op.inputs[1])
        w = sg.tensors[w_index]
        granularity = (
            "per-channel"
            if w.quantization is not None
            and w.quantization.scale is not None
            and len(w.quantization.scale) > 1
            else "per-tensor"
        )
        if _dtype(w) in ("int8", "int4"):
            base = {"int8": "int8", "int16": "a16w8"}.get(act, "dynamic")
            return f"{base} ({granularity})"
        src = producers.get(w_index)
        if src is not None and fe.op_name(model, src) == "DEQUANTIZE":
            qw = sg.tensors[src.inputs[0]]
            gran = (
                "per-channel"
                if qw.quantization is not None
                and qw.quantization.scale is not None
                and len(qw.quantization.scale) > 1
                else "per-tensor"
            )
            return f"weight_only_{_dtype(qw)} ({gran})"
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
