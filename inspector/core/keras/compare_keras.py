"""Comparing a Keras model (float, or QAT: its fake-quant simulation as trained) with a TFLite
model layer by layer.

Each Keras layer's output is read from one probe model (`Model(inputs, [layer outputs])`), run
on chunks of samples; B runs sample by sample with every intermediate exposed (`ModelRunner`),
its paired tensors gathered into the chunk. Layers pair by the converter's tensor names
(`naming`); model outputs pair by position. Isolated error (where feasible): a layer (with the
layers fused into it) is fed B's dequantized input tensor, so its error is its own.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.plan import int_quant, make_stats
from inspector.core.compare.reference import keras_reference
from inspector.core.compare.result import (
    ComparisonResult,
    LayerResult,
    OutputResult,
    PerSampleOutputs,
)
from inspector.core.errors import InputError
from inspector.core.keras.layer_graph import input_positions, isolation_chain
from inspector.core.keras.load import load_keras, require_keras_model
from inspector.core.keras.naming import pair_layers
from inspector.core.keras.pair_inputs import check_same_inputs
from inspector.core.keras.result import KerasComparison, first_departure
from inspector.core.progress import TaskState, as_task
from inspector.core.runtime.runner import RUNTIMES, ModelRunner, check_runtime
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import feed
from inspector.core.stats.tensor_sums import dequantized
from inspector.core.tflite.model import Model, Subgraph, load_model
from inspector.core.tflite.signatures import select_signature

CHUNK = 64


@dataclass
class _Job:
    layer: Any  # the Keras layer
    op_index: int
    op_type: str
    tensor: int
    stats: Any
    chain: list[Any] | None = None  # layers to run for the isolated error (fused ones first)
    source: int | None = None  # B tensor feeding the chain; None: the model input
    iso: Any = None


def compare_keras(model_path: str, quant_path: str, options: CompareOptions | None = None, task: TaskState | None = None) -> KerasComparison:
    opts = options or CompareOptions()
    task = as_task(task)
    check_runtime(opts.runtime)
    t0 = time.perf_counter()
    loaded = load_keras(model_path, task.span(0.0, 0.05))
    model = require_keras_model(loaded)
    keras = loaded.tf.keras
    qm = select_signature(load_model(quant_path), opts.signature)
    check_same_inputs(model, qm, model_path, quant_path)
    layers = [ly for ly in model.layers if type(ly).__name__ != "InputLayer"]
    pairing = pair_layers([ly.name for ly in layers], qm)
    jobs: list[_Job] = []
    unmatched: list[dict[str, Any]] = []
    sg = qm.main
    for ly in layers:
        ref = pairing.paired.get(ly.name)
        reason = None
        if ref is None:
            owner = pairing.fused_into.get(ly.name)
            reason = f"fused into layer '{owner}' (no tensor of its own in B)" if owner else "no tensor in B carries its name"
        elif isinstance(ly.output, list | tuple):
            reason = "has several outputs"
        elif int(np.prod([d or 1 for d in ly.output.shape[1:]])) != int(np.prod(sg.tensors[ref.tensor].shape[1:], dtype=np.int64)):
            reason = f"output shape {list(ly.output.shape)} differs from B's tensor {list(sg.tensors[ref.tensor].shape)}"
        if reason is not None or ref is None:
            unmatched.append({"side": "keras", "keras_layer": ly.name, "keras_class": type(ly).__name__, "reason": reason})
            continue
        qt = sg.tensors[ref.tensor]
        job = _Job(ly, ref.op_index, ref.op_type, ref.tensor, make_stats(qt, qt.shape, ref.op_type))
        if opts.isolated:
            iso = isolation_chain(ly, pairing, qm)
            if iso is not None:
                job.chain, job.source = iso
                job.iso = make_stats(qt, qt.shape, ref.op_type)
        jobs.append(job)
    jobs.sort(key=lambda j: j.op_index)
    outputs = [o for o in model.outputs]
    probe = keras.Model(model.inputs, [j.layer.output for j in jobs] + outputs)
    runner = ModelRunner(qm, opts.runtime)
    source = open_source(qm, qm, opts.samples)
    if source.count == 0:
        raise InputError("no samples to run", opts.samples.source)
    out_tensors = list(sg.outputs[: len(outputs)])
    producers = sg.producers()
    out_quant = [int_quant(sg.tensors[t]) for t in out_tensors]
    out_stats = []
    for t in out_tensors:
        src = sg.tensors[t]
        prod = producers.get(t)
        if int_quant(src) is None and prod is not None and prod.type == "DEQUANTIZE":
            src = sg.tensors[prod.inputs[0]]
        out_stats.append(make_stats(src, sg.tensors[t].shape, None))
    need = {j.tensor for j in jobs} | {j.source for j in jobs if j.source is not None} | set(out_tensors)
    missing = need - set(runner.exposed) - set(sg.inputs)
    if missing:
        raise InputError(f"tensors {sorted(missing)} of B cannot be read back", quant_path)
    positions: list[int] | None = None
    per_f: list[tuple[Any, ...]] = []
    per_q: list[tuple[Any, ...]] = []
    labels, sources = [], []
    done = 0
    chunk: list[Any] = []
    samples = iter(source)
    while True:
        s = next(samples, None)
        if s is not None:
            chunk.append(s)
        if chunk and (s is None or len(chunk) == CHUNK):
            task.check()
            if positions is None:
                positions = input_positions(model, chunk[0].names)
            xs = [np.concatenate([np.asarray(c.inputs[p], np.float32) for c in chunk]) for p in positions]
            kv = [np.asarray(v) for v in _as_list(probe(xs if len(xs) > 1 else xs[0], training=False))]
            qv = _run_b(runner, qm, chunk, need)
            for j, x in zip(jobs, kv, strict=False):
                y = dequantized(qv[j.tensor], int_quant(sg.tensors[j.tensor]))
                j.stats.update(x.reshape(y.shape), y)
                if j.iso is not None and j.chain is not None:  # set together
                    inp = xs[0] if j.source is None else dequantized(qv[j.source], int_quant(sg.tensors[j.source]))
                    inp = inp.reshape((len(chunk), *[d or 1 for d in j.chain[0].input.shape[1:]]))
                    for ly in j.chain:
                        inp = ly(inp, training=False)
                    j.iso.update(np.asarray(inp).reshape(y.shape), y)
            for k, (t, st) in enumerate(zip(out_tensors, out_stats, strict=True)):
                x = kv[len(jobs) + k]
                y = dequantized(qv[t], out_quant[k])
                st.update(x.reshape(y.shape), y)
            for i in range(len(chunk)):
                per_f.append(tuple(np.asarray(kv[len(jobs) + k][i : i + 1], np.float32) for k in range(len(out_tensors))))
                per_q.append(tuple(dequantized(qv[t][i : i + 1], out_quant[k]).astype(np.float32) for k, t in enumerate(out_tensors)))
            labels += [c.label for c in chunk]
            sources += [c.source for c in chunk]
            done += len(chunk)
            chunk = []
            task.report(done / source.count, f"sample {done} of {source.count}")
        if s is None:
            break
    result = ComparisonResult(
        float_path=str(model_path), quant_path=str(quant_path), runtime=opts.runtime, kernels=RUNTIMES[opts.runtime],
        samples=done, layers=tuple(_layer(j, sg) for j in jobs), unmatched=(),
        outputs=tuple(OutputResult(_out_name(qm, t), -1, t, st.result()) for t, st in zip(out_tensors, out_stats, strict=True)),
        isolated=opts.isolated, seed=opts.samples.seed, inputs=source.description, labels=tuple(labels),
        sources=tuple(sources), class_names=source.class_names,
        per_sample_outputs=PerSampleOutputs(tuple(_out_name(qm, t) for t in out_tensors), tuple(per_f), tuple(per_q)),
        elapsed_s=time.perf_counter() - t0, task_kind=opts.task_kind, samples_are_random=opts.samples.source is None,
        signature=opts.signature, reference=keras_reference(model_path, loaded.is_qat),
    )  # fmt: skip
    names = {j.op_index: j.layer.name for j in jobs}
    first, steps = first_departure(result, names, loaded.is_qat)
    info = {"format": "keras", "path": str(model_path), "keras_format": loaded.format, "qat": loaded.is_qat,
            "versions": loaded.tf.versions, "layers": len(layers)}  # fmt: skip
    return KerasComparison(result, names, info, first, steps, tuple(unmatched))


def _as_list(v: Any) -> list[Any]:
    return list(v) if isinstance(v, list | tuple) else [v]


def _run_b(runner: ModelRunner, qm: Model, chunk: list[Any], need: set[int]) -> dict[int, np.ndarray]:
    """B's tensors in `need` for every sample of the chunk, stacked along the batch axis."""
    out: dict[int, np.ndarray] = {}
    for i, s in enumerate(chunk):
        values = runner.run(feed(qm, s))
        for t in need:
            if t not in out:
                out[t] = np.empty((len(chunk), *values[t].shape[1:]), values[t].dtype)
            out[t][i] = values[t][0]
        del values  # no view of the interpreter may outlive the run
    return out


def _out_name(qm: Model, t: int) -> str:
    for sig in qm.signatures:
        if sig.subgraph == qm.main.index:
            for k, v in sig.outputs.items():
                if v == t:
                    return k
    return qm.main.tensors[t].name


def _layer(j: _Job, sg: Subgraph) -> LayerResult:
    qt = sg.tensors[j.tensor]
    q = int_quant(qt)
    st = j.stats
    return LayerResult(
        op_index=j.op_index, op_type=j.op_type, tensor_name=qt.name, float_tensor=-1, quant_tensor=j.tensor,
        match="name", metrics=st.result(), isolated=None if j.iso is None else j.iso.result(),
        isolated_note=None if j.iso is not None or j.chain is not None else "not fed from one paired tensor",
        dtype=qt.dtype, shape=tuple(qt.shape), scale=None if q is None else tuple(q.scales),
        zero_point=None if q is None else tuple(q.zero_points), quantized_dimension=None if q is None else q.quantized_dimension,
        float_min=st.xmin if np.isfinite(st.xmin) else None, float_max=st.xmax if np.isfinite(st.xmax) else None,
    )  # fmt: skip


def compare_keras_kept(model_path: str, quant_path: str, options: CompareOptions | None = None, task: TaskState | None = None) -> KerasComparison:
    """`compare_keras`, read back from disk when this Keras model, this TFLite model and these
    inputs were compared with these options before (`runtime.prepared_cache`: keyed by the three
    files' content, the paths the result names, the options, the code and TensorFlow's version):
    TensorFlow is then not even imported."""
    from inspector.core.keras.twin_cache import default_cache_root, tool_fingerprint
    from inspector.core.runtime.prepared_cache import kept

    opts = options or CompareOptions()
    src = opts.samples.source
    paths = [str(model_path), str(quant_path), *([str(src)] if src is not None else [])]
    # the twins' folder too: the result names the twin it compared, which lives there
    extra = (paths, sorted(opts.to_json().items(), key=lambda kv: kv[0]).__repr__(), tool_fingerprint(), str(default_cache_root()))
    return kept("keras-compare", paths, extra, lambda: compare_keras(model_path, quant_path, opts, task), valid=_twins_exist)


def _twins_exist(kc: KerasComparison) -> bool:
    """A comparison read back names files of the twin cache: valid while they are still there."""
    named = [kc.result.float_path, kc.result.quant_path, *(v for k, v in kc.float_info.items() if k.endswith("path") and isinstance(v, str))]
    return all(os.path.exists(p) for p in named)


def compare_keras_in_worker(model_path: str, quant_path: str, options: CompareOptions | None = None, *, task: TaskState | None = None,
                            worker: Any = None) -> KerasComparison:  # fmt: skip
    """`compare_keras` in the worker process (TensorFlow and LiteRT stay out of the caller), read
    back from disk for a repeated comparison (`compare_keras_kept`)."""
    from inspector.core.runtime.worker import run_isolated

    return run_isolated(compare_keras_kept, str(model_path), str(quant_path), options, task=task,
                        step="comparing the Keras model with the TFLite model", models=(str(model_path), str(quant_path)),
                        worker=worker)  # fmt: skip
