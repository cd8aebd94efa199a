"""How good an edited model is: an objective tensor's SQNR against model A, size, latency.

`Objective` runs A once over the samples and keeps its values of the objective tensors (small:
model outputs, logits), so each edited model costs one run. `latency_ms` is the median
single-thread XNNPACK invoke time. `TempModel` holds edited bytes in a temporary .tflite file for
the path-based readers and runners.
"""

from __future__ import annotations

import math
import os
import statistics
import tempfile
import time
from collections.abc import Sequence

import numpy as np

from inspector.core.compare.pairing import Pairing
from inspector.core.errors import InputError
from inspector.core.quantmath.quant import dequantize
from inspector.core.runtime.runner import ModelRunner
from inspector.core.samples.spec import Sample, feed, signature_feed
from inspector.core.tflite import edit as fe
from inspector.core.tflite.model import Model, load_model
from inspector.core.tflite.rewrite import patch_outputs
from inspector.core.tflite.signatures import select_signature


class Objective:
    """SQNR of B's objective tensors in an edited model, against A's values (computed once)."""

    def __init__(
        self, fm: Model, qm: Model, pairing: Pairing, tensors: Sequence[int], samples: Sequence[Sample], runtime: str,
        signature: str | None = None,
    ) -> None:
        self.signature = signature  # fm and qm are seen through it; so is every edited model
        self.names = tuple(qm.main.tensors[t].name for t in tensors)
        self.samples = samples
        self.runtime = runtime
        floats = []
        for t in tensors:
            f = pairing.float_for_quant(t)
            if f is None:
                raise InputError(f"tensor '{qm.main.tensors[t].name}' has no float counterpart", qm.path)
            floats.append(f)
        runner = ModelRunner(fm, runtime)
        self.ref = [[np.array(runner.run(feed(fm, s))[f], np.float64) for f in floats] for s in samples]

    def sqnr(self, data: bytes) -> float:
        with TempModel(data) as path:
            m = select_signature(load_model(path), self.signature)
            idx = []
            for n in self.names:
                t = objective_tensor(m, n)
                if t is None:
                    raise InputError(f"the edited model has no tensor '{n}'")
                idx.append(t.index)
            content = patch_outputs(data, m.main.index, tuple(idx)) or _rebuilt_outputs(data, idx, m.main.index)
            runner = ModelRunner(m, self.runtime, content=content, exposed=tuple(idx))
            num = np.zeros(len(idx))
            den = np.zeros(len(idx))
            for s, refs in zip(self.samples, self.ref, strict=True):
                values = runner.run(feed(m, s))
                for k, t in enumerate(idx):
                    tt = m.main.tensors[t]
                    quantized = tt.quantization is not None and tt.dtype.startswith("int")
                    y = dequantize(values[t], tt.quantization) if quantized else np.asarray(values[t], np.float64)
                    num[k] += float(np.sum(refs[k] ** 2))
                    den[k] += float(np.sum((refs[k] - y) ** 2))
                del values
        return float(min(math.inf if d == 0 else 10 * math.log10(n / d) for n, d in zip(num, den, strict=True)))


def objective_tensor(m: Model, name: str):
    """B's objective tensor `name` in an edited model: itself, else its float twin when keep-float
    made the op and all its readers float (`keep_float` names it NAME/float and drops the int8
    tensor nobody reads any more; the float value is the one the model carries on)."""
    t = m.main.tensor_by_name(name)
    return t if t is not None else m.main.tensor_by_name(f"{name}/float")


def _rebuilt_outputs(data: bytes, idx: list[int], subgraph: int) -> bytes:
    m = fe.read(data)
    m.subgraphs[subgraph].outputs = list(idx)
    m.signatureDefs = []
    return fe.write(m)


class TempModel:
    def __init__(self, data: bytes) -> None:
        fd, self.path = tempfile.mkstemp(suffix=".tflite", prefix="suggest-")
        with os.fdopen(fd, "wb") as f:
            f.write(data)

    def __enter__(self) -> str:
        return self.path

    def __exit__(self, *exc: object) -> None:
        os.unlink(self.path)


def latency_ms(data: bytes, qm: Model, sample: Sample, runs: int = 10, signature: str | None = None) -> float:
    """Median single-thread XNNPACK invoke time (of `signature`'s call, inputs set each time, when given)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_content=data, experimental_op_resolver_type=OpResolverType.AUTO, num_threads=1)
    inputs = signature_feed(qm, sample, signature)
    if inputs is not None:
        runner = it.get_signature_runner(signature)
        runner(**inputs)
        times = []
        for _ in range(runs):
            t0 = time.perf_counter()
            runner(**inputs)
            times.append(time.perf_counter() - t0)
        return 1000.0 * statistics.median(times)
    it.allocate_tensors()
    by_name = {d["name"]: d["index"] for d in it.get_input_details()}
    for t, v in feed(qm, sample).items():
        it.set_tensor(by_name[qm.main.tensors[t].name], v)
    it.invoke()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        it.invoke()
        times.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(times)
