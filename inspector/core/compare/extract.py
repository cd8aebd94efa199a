"""Extract one op of the quantized model B as a minimal reproduction a kernel maintainer can run.

The single-op model keeps B's own tensors for that op (types, shapes, quantization, constants,
options, operator code); its graph inputs are the op's non-constant inputs and its outputs the
op's outputs, so inputs and outputs stay integers and there is no QUANTIZE/DEQUANTIZE. The op's
inputs are captured in the full model (every intermediate exposed, reference kernels) over the
samples, with the full model's op outputs as the expected values (and, with a float model, the
paired float op's outputs), so the single-op model reproduces them bit for bit on the reference
kernels. `extract_op` runs in the worker process; `write_extraction` writes the folder through
the one writer: model.tflite, inputs.npz, expected.npz (float outputs under `float:NAME`),
run.py (reference kernels and XNNPACK, differences in LSB) and extract.json (what was checked).
"""

from __future__ import annotations

import copy
import io
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from ai_edge_litert import schema_py_generated as schema

from inspector.core.compare.extract_runpy import RUN_PY
from inspector.core.compare.pairing import pair_models
from inspector.core.errors import InputError
from inspector.core.progress import TaskState, as_task
from inspector.core.runtime.runner import ModelRunner
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import feed
from inspector.core.tflite import edit as fe
from inspector.core.tflite.litertlm import read_model_bytes
from inspector.core.tflite.model import Model, load_model
from inspector.core.tflite.op_facts import NOT_EXTRACTABLE_OPS
from inspector.core.tflite.signatures import select_signature
from inspector.core.writing import make_output_folder, write_output

FILES = ("model.tflite", "inputs.npz", "expected.npz", "run.py", "extract.json")  # what DIR receives
FLOAT_PREFIX = "float:"


@dataclass
class Extraction:
    op_index: int
    op_type: str
    signature: str | None
    model_bytes: bytes
    inputs: dict[str, np.ndarray]  # single-op model input name -> values stacked over samples
    expected: dict[str, np.ndarray]  # output name -> the full model's values (and float:NAME)
    samples: int
    reference_bit_exact: bool = False
    xnnpack_max_lsb: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        return {"op_index": self.op_index, "op_type": self.op_type, "signature": self.signature,
                "samples": self.samples, "inputs": sorted(self.inputs), "outputs": sorted(k for k in self.expected if not k.startswith(FLOAT_PREFIX)),
                "reference_bit_exact": self.reference_bit_exact, "xnnpack_max_lsb": self.xnnpack_max_lsb}  # fmt: skip


def single_op_model(data: bytes | bytearray, subgraph: int, op_index: int) -> tuple[bytes, list[int], list[int]]:
    """(model bytes, B tensor indices of its inputs, of its outputs) for op `op_index`."""
    m = fe.read(data)
    sg = m.subgraphs[subgraph]
    op = sg.operators[op_index]
    keep: list[int] = []
    for t in [*(op.inputs if op.inputs is not None else []), *(op.outputs if op.outputs is not None else []),
              *(op.intermediates if op.intermediates is not None else [])]:
        if int(t) >= 0 and int(t) not in keep:
            keep.append(int(t))
    new_index = {t: k for k, t in enumerate(keep)}
    buffers = [schema.BufferT()]
    tensors, graph_inputs = [], []
    for t in keep:
        tt = copy.deepcopy(sg.tensors[t])
        data_ = m.buffers[tt.buffer].data if 0 < tt.buffer < len(m.buffers) else None
        if data_ is not None and len(data_):
            b = schema.BufferT()
            b.data = np.asarray(data_, np.uint8).copy()
            buffers.append(b)
            tt.buffer = len(buffers) - 1
        else:
            tt.buffer = 0
            if t in [int(i) for i in op.inputs]:
                if tt.isVariable:
                    raise InputError(f"op {op_index} reads a variable tensor; it cannot be extracted alone")
                graph_inputs.append(t)
        tensors.append(tt)
    outputs = [int(o) for o in op.outputs if int(o) >= 0]
    nop = copy.deepcopy(op)
    nop.opcodeIndex = 0
    nop.inputs = [new_index[int(i)] if int(i) >= 0 else -1 for i in op.inputs]
    nop.outputs = [new_index[o] for o in outputs]
    if op.intermediates is not None:
        nop.intermediates = [new_index[int(i)] for i in op.intermediates if int(i) >= 0]
    nsg = schema.SubGraphT()
    nsg.tensors, nsg.operators = tensors, [nop]
    nsg.inputs, nsg.outputs = [new_index[t] for t in graph_inputs], [new_index[o] for o in outputs]
    nsg.name = f"op{op_index}"
    out = schema.ModelT()
    out.version = m.version
    out.operatorCodes = [copy.deepcopy(m.operatorCodes[op.opcodeIndex])]
    out.subgraphs, out.buffers = [nsg], buffers
    out.description = f"op {op_index} of subgraph {subgraph}, extracted by tflite-inspector".encode()
    return fe.write(out), graph_inputs, outputs


def _keys(model: Model, tensors: list[int]) -> list[str]:
    names = [model.main.tensors[t].name for t in tensors]
    if len(set(names)) != len(names):
        raise InputError("the op's tensors share a name; their values could not be told apart")
    return names


def extract_op(quant_path: str, op_index: int, samples: SampleSettings, float_path: str | None = None,
               signature: str | None = None, task: TaskState | None = None) -> Extraction:  # fmt: skip
    """Capture op `op_index` of B (of `signature`'s subgraph) over the samples; runs the interpreter
    (worker process)."""
    task = as_task(task)
    qm = select_signature(load_model(quant_path), signature)
    ops = qm.main.ops
    if not 0 <= op_index < len(ops):
        raise InputError(f"--op {op_index}: the model has ops 0 to {len(ops) - 1} in this subgraph", quant_path)
    op = ops[op_index]
    if op.type in NOT_EXTRACTABLE_OPS:
        raise InputError(f"op {op_index} ({op.type}) runs other subgraphs or variables; it cannot be extracted alone", quant_path)
    data, ins, outs = single_op_model(read_model_bytes(quant_path), qm.main.index, op_index)  # a bundle section too
    fm = f_op = None
    if float_path is not None:
        fm = select_signature(load_model(float_path), signature)
        f_op = pair_models(fm, qm).float_op_for(op_index)
        if f_op is None:
            raise InputError(f"op {op_index} ({op.type}) has no paired op in the float model", float_path)
    source = open_source(fm if fm is not None else qm, qm, samples)
    if source.count == 0:
        raise InputError("no samples to run", samples.source)
    q_runner = ModelRunner(qm, "reference")
    f_runner = ModelRunner(fm, "reference") if fm is not None else None
    f_outs = list(fm.main.ops[f_op].outputs) if fm is not None and f_op is not None else []
    cap: dict[int, list[np.ndarray]] = {t: [] for t in ins + outs}
    fcap: list[list[np.ndarray]] = [[] for _ in f_outs]
    done = 0
    for sample in source:
        task.check()
        values = q_runner.run(feed(qm, sample))
        for t in cap:
            cap[t].append(np.array(values[t]))
        del values
        if f_runner is not None and fm is not None:
            fv = f_runner.run(feed(fm, sample))
            for k, t in enumerate(f_outs):
                fcap[k].append(np.array(fv[t]))
            del fv
        done += 1
        task.report(done / source.count, f"sample {done} of {source.count}")
    in_keys, out_keys = _keys(qm, ins), _keys(qm, outs)
    inputs = {k: np.stack(cap[t]) for k, t in zip(in_keys, ins, strict=True)}
    expected = {k: np.stack(cap[t]) for k, t in zip(out_keys, outs, strict=True)}
    for key, t in zip(out_keys, f_outs, strict=False):
        expected[FLOAT_PREFIX + key] = np.stack(fcap[f_outs.index(t)])
    ex = Extraction(op_index, op.type, signature, data, inputs, expected, done)
    _check(ex, qm, outs)
    return ex


def run_single(data: bytes, inputs: dict[str, np.ndarray], reference: bool = True) -> dict[str, np.ndarray]:
    """Run the single-op model on each stacked sample; {output name: stacked values}."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    rt = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if reference else OpResolverType.AUTO
    it = Interpreter(model_content=data, experimental_op_resolver_type=rt, num_threads=1)
    it.allocate_tensors()
    n = len(next(iter(inputs.values()))) if inputs else 1
    got: dict[str, list[np.ndarray]] = {}
    for s in range(n):
        for d in it.get_input_details():
            v = inputs[d["name"]][s]
            if tuple(d["shape"]) != v.shape:
                it.resize_tensor_input(d["index"], v.shape)
                it.allocate_tensors()
            it.set_tensor(d["index"], v)
        it.reset_all_variables()  # an op with state (LSTM) starts every sample alike, as compared
        it.invoke()
        for d in it.get_output_details():
            got.setdefault(d["name"], []).append(np.array(it.get_tensor(d["index"])))
    return {k: np.stack(v) for k, v in got.items()}


def _check(ex: Extraction, qm: Model, outs: list[int]) -> None:
    ref = run_single(ex.model_bytes, ex.inputs, reference=True)
    xnn = run_single(ex.model_bytes, ex.inputs, reference=False)
    ex.reference_bit_exact = all(np.array_equal(ref[k], ex.expected[k]) for k in ref)
    for t in outs:
        name = qm.main.tensors[t].name
        q = qm.main.tensors[t].quantization
        step = float(q.scales[0]) if q is not None and len(q.scales) == 1 and np.issubdtype(xnn[name].dtype, np.integer) else 1.0
        diff = np.abs(xnn[name].astype(np.float64) - ex.expected[name].astype(np.float64))
        ex.xnnpack_max_lsb[name] = float(diff.max() if np.issubdtype(xnn[name].dtype, np.integer) else diff.max() / step) if diff.size else 0.0


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds like its allow_pickle flag
    return buf.getvalue()


def write_extraction(ex: Extraction, out_dir: str) -> list[str]:
    """Write the folder (created when missing, inside an existing folder; an existing non-folder
    is refused); the paths."""
    d = Path(out_dir)
    if d.exists() and not d.is_dir():
        raise InputError("--out must be a folder, and this is an existing file", str(d))
    make_output_folder(d)
    contents: tuple[bytes | str, ...] = (ex.model_bytes, _npz(ex.inputs), _npz(ex.expected), RUN_PY,
                                         json.dumps(ex.summary(), indent=2) + "\n")  # fmt: skip
    files = dict(zip(FILES, contents, strict=True))
    for name, data in files.items():
        write_output(d / name, data)
    return [str(d / n) for n in files]
