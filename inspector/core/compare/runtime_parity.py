"""Runtime parity: the same quantized model on two runtimes (or thread counts), layer by layer.

"The numbers on the device differ from the desktop": both sides run the model as a rewritten
copy exposing every intermediate (`runtime.runner.ModelRunner`), sample by sample, and for each
op output we count the elements that differ and the largest difference in LSB (steps of that
tensor's own scale: the integer difference for a quantized tensor; a DEQUANTIZE output is
measured in its input's steps). The first op in execution order whose output differs is marked:
everything after it may only inherit the difference.

Each side's CONV_2D / DEPTHWISE_CONV_2D / FULLY_CONNECTED / ADD outputs are also recomputed from
that side's own int8 inputs by the spec's integer math (`quantmath.integer_kernels`), so a
difference is traced to the kernel that departs from the spec rather than to its inputs.

The result objects and their JSON are in `parity_result`. `compare_runtimes` is a top-level function of picklable
arguments with a picklable result: it runs in the worker process.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from inspector.core.compare.parity_result import (
    Difference,
    LayerParity,
    OutputParity,
    ParityOptions,
    RuntimeParityResult,
)
from inspector.core.errors import InputError
from inspector.core.progress import TaskState, as_task
from inspector.core.quantmath.integer_kernels import integer_output, supports
from inspector.core.runtime.runner import ModelRunner, check_runtime
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import feed
from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Subgraph, load_model
from inspector.core.tflite.rewrite import expose_intermediates


@dataclass
class _Tally:
    """Running counts of one tensor's differences over all samples."""

    step: float | None  # float units per LSB; 1.0 for integer tensors
    differ: int = 0
    total: int = 0
    max_lsb: float = 0.0

    def add(self, a: np.ndarray, b: np.ndarray) -> None:
        if a.shape != b.shape:
            raise ValueError(f"shapes differ: {a.shape} vs {b.shape}")
        if np.issubdtype(a.dtype, np.integer):
            d = np.abs(a.astype(np.int64) - b.astype(np.int64)).astype(np.float64)
        else:
            d = np.abs(a.astype(np.float64) - b.astype(np.float64))
        self.differ += int(np.count_nonzero(d))
        self.total += d.size
        if d.size:
            self.max_lsb = max(self.max_lsb, float(d.max()) / (self.step or 1.0))

    def result(self) -> Difference:
        share = self.differ / self.total if self.total else 0.0
        return Difference(share, None if self.step is None else self.max_lsb)


@dataclass
class _LayerTally:
    op_index: int
    tensor: int
    diff: _Tally
    spec: dict[str, _Tally] | None = field(default=None)


def lsb_step(sg: Subgraph, tensor: int) -> float | None:
    """Float units per LSB of a tensor: 1 for integer tensors (their values are steps); for a float
    tensor made by DEQUANTIZE, its input's scale; None for other float tensors."""
    t = sg.tensors[tensor]
    if t.dtype in INT_LIMITS or t.dtype in ("int32", "int64"):
        return 1.0
    prod = sg.producers().get(tensor)
    if prod is not None and prod.type == "DEQUANTIZE" and prod.inputs and prod.inputs[0] >= 0:
        q = sg.tensors[prod.inputs[0]].quantization
        if q is not None and len(q.scales) == 1 and q.scales[0] > 0:
            return float(q.scales[0])
    return None


def compare_runtimes(
    quant_path: str,
    options: ParityOptions | None = None,
    task: TaskState | None = None,
) -> RuntimeParityResult:
    """Run `quant_path` on both sides over the samples; per-layer and per-output differences."""
    opts = options or ParityOptions()
    task = as_task(task)
    for r in opts.runtimes:
        check_runtime(r)
    if any(t < 1 for t in opts.threads):
        raise InputError(f"thread counts must be at least 1, got {list(opts.threads)}")
    model = load_model(str(quant_path))
    if opts.signature is not None:
        try:
            model = model.for_signature(opts.signature)
        except KeyError:
            keys = ", ".join(s.key for s in model.signatures) or "none"
            raise InputError(f"no signature '{opts.signature}' (signatures: {keys})", str(quant_path)) from None
    sg = model.main
    content, exposed = expose_intermediates(model.path, sg.index)
    runners = [ModelRunner(model, rt, th, content=content, exposed=exposed)
               for rt, th in zip(opts.runtimes, opts.threads, strict=True)]  # fmt: skip
    for runner in runners:  # fresh interpreters: a stream starts from the reset state
        runner.carry_state = opts.samples.carry_state
    labels = opts.labels()
    source = open_source(model, model, opts.samples)
    if source.count == 0:
        raise InputError("no samples to run", opts.samples.source)
    exposed_set = set(exposed)
    layers: list[_LayerTally] = []
    for op in sg.ops:
        if not op.outputs or op.outputs[0] < 0 or op.outputs[0] not in exposed_set:
            continue
        t = op.outputs[0]
        if sg.tensors[t].dtype in ("string", "resource", "variant", "bool"):
            continue
        spec = {label: _Tally(1.0) for label in labels} if supports(sg, op) else None
        layers.append(_LayerTally(op.index, t, _Tally(lsb_step(sg, t)), spec))
    outputs = {t: _Tally(lsb_step(sg, t)) for t in sg.outputs if t >= 0}
    done = 0
    for sample in source:
        task.check()
        _accumulate(model, runners, labels, feed(model, sample), layers, outputs)
        done += 1
        task.report(done / source.count, f"sample {done} of {source.count}")
    return _result(model, opts, labels, done, layers, outputs, source.description)


def _accumulate(model: Model, runners: list[ModelRunner], labels: tuple[str, str], f: dict[int, np.ndarray],
                layers: list[_LayerTally], outputs: dict[int, _Tally]) -> None:  # fmt: skip
    """One sample on both sides. The interpreter refuses to run again while views of its buffers
    live, so side A is copied and side B's views die with this function."""
    sg = model.main
    va = {k: np.array(v) for k, v in runners[0].run(f).items()}
    vb = runners[1].run(f)
    for lt in layers:
        lt.diff.add(va[lt.tensor], vb[lt.tensor])
        if lt.spec is not None:
            op = sg.ops[lt.op_index]
            for label, values in zip(labels, (va, vb), strict=True):
                ins = {i: values[i] for i in op.inputs if i >= 0 and not sg.tensors[i].is_constant}
                lt.spec[label].add(np.asarray(values[lt.tensor]), integer_output(model, op, ins, sg))
    for t, tally in outputs.items():
        tally.add(va[t], vb[t])


def _result(model: Model, opts: ParityOptions, labels: tuple[str, str], done: int,
            layers: list[_LayerTally], outputs: dict[int, _Tally], inputs: str) -> RuntimeParityResult:  # fmt: skip
    sg = model.main
    first_seen = False
    out_layers = []
    for lt in layers:
        d = lt.diff.result()
        first = d.differ_share > 0 and not first_seen
        first_seen = first_seen or first
        op = sg.ops[lt.op_index]
        spec = None if lt.spec is None else {k: v.result() for k, v in lt.spec.items()}
        out_layers.append(LayerParity(op.index, op.type, sg.tensors[lt.tensor].name, lt.tensor,
                                      d.differ_share, d.max_lsb, first, spec))  # fmt: skip
    names = _output_names(model)
    outs = tuple(OutputParity(names.get(t, sg.tensors[t].name), t, *_pair(tally.result())) for t, tally in outputs.items())
    return RuntimeParityResult(
        model=model.path, runtimes=opts.runtimes, threads=opts.threads, samples=done,
        layers=tuple(out_layers), outputs=outs, labels=labels,
        samples_are_random=opts.samples.source is None, inputs=inputs,
        signature=opts.signature, subgraph=sg.index,
    )  # fmt: skip


def _pair(d: Difference) -> tuple[float, float | None]:
    return d.differ_share, d.max_lsb


def _output_names(model: Model) -> dict[int, str]:
    key = model.signature_key
    for s in model.signatures:
        if (s.key == key) if key is not None else s.subgraph == model.main.index:
            return {t: name for name, t in s.outputs.items()}
    return {}
