"""A transformer-shaped model over 2.5 GB with its weights after the flatbuffer (buffer offsets).

    TFLITE_INSPECTOR_BIG_BENCH=1 make bench      (opt-in: ~3.4 GB of disk, a few minutes)
    .venv/bin/python tests/perf/bench_big_transformer.py [--keep] [--dir DIR]

Writes the flatbuffer directly (the TF converter cannot hold 2.5 GB of constants in a graph):
token ids [1, 8] -> GATHER from an embedding [200000, 2048] -> 8 blocks of FC 2048->8192 (RELU),
FC 8192->2048 and a residual ADD -> FC head 2048->256; every weight stored after the flatbuffer
(`Buffer.offset` / `size`), float32: 2.7 GB. Its int8 twin: per-channel int8 FC weights (LiteRT's
hybrid kernels: activations quantized per row at run time) and a per-tensor int8 embedding behind
DEQUANTIZE, 0.68 GB. (An int4-blockwise twin needs the blockwise reader of issue 15's other half.)
Then, each in a fresh process (peak RSS = VmHWM of that process):
- open both models to a populated tensor list (target < 1 s),
- weight histogram + error metrics of the largest tensor (target < 1 s; `analyze_tensors`,
  chunked, exact or subsampled as it says),
- plain LiteRT: load both models and run 8 samples each, two interpreters in two threads,
- ours: `compare_models` on the same 8 samples (targets: peak RSS <= 1.2x plain, time <= 2x).
The files are deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO)]

T, D, F, L, V, H = 8, 2048, 8192, 8, 200_000, 256
SAMPLES = 8
CHUNK = 1 << 24  # values generated at a time


def _weights(seed: int, shape: tuple[int, ...]):
    """The float weights of one tensor, as row blocks (deterministic: the twin regenerates them)."""
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK // shape[1])
    for r0 in range(0, shape[0], rows):
        n = min(rows, shape[0] - r0)
        yield (rng.standard_normal((n, shape[1]), np.float32) * np.float32(0.02)).astype(np.float32)


def build(path: Path, quantized: bool) -> None:
    import flatbuffers
    from ai_edge_litert import schema_py_generated as s

    tensors, buffers, data = [], [s.BufferT()], []  # data: (buffer index, writer)

    def tensor(name, shape, ttype, writer=None, quant=None):
        t = s.TensorT()
        t.name, t.shape, t.type, t.quantization = name.encode(), list(shape), ttype, quant
        if writer is not None:
            b = s.BufferT()
            b.offset, b.size = 2, writer[0]  # offset set below
            buffers.append(b)
            t.buffer = len(buffers) - 1
            data.append((t.buffer, writer[1]))
        else:
            t.buffer = 0
        tensors.append(t)
        return len(tensors) - 1

    def qparams(scales, zps, dim=0):
        q = s.QuantizationParametersT()
        q.scale, q.zeroPoint, q.quantizedDimension = list(scales), list(zps), dim
        return q

    def float_writer(seed, shape):
        return shape[0] * shape[1] * 4, lambda f: [f.write(b.tobytes()) for b in _weights(seed, shape)]

    def int8_rows(seed, shape):
        """Per-row symmetric int8 (scale = max|w| / 127 per output channel)."""
        scales = np.concatenate([np.abs(b).max(axis=1) / 127.0 for b in _weights(seed, shape)]).astype(np.float32)

        def write(f):
            r0 = 0
            for b in _weights(seed, shape):
                sc = scales[r0 : r0 + len(b), None]
                f.write(np.clip(np.round(b / sc), -127, 127).astype(np.int8).tobytes())
                r0 += len(b)

        return scales, (shape[0] * shape[1], write)

    codes = {}

    def code(op):
        if op not in codes:
            codes[op] = len(codes)
        return codes[op]

    ops = []

    def operator(op, ins, outs, opt_type=0, opt=None):
        o = s.OperatorT()
        o.opcodeIndex, o.inputs, o.outputs = code(op), list(ins), list(outs)
        o.builtinOptionsType, o.builtinOptions = opt_type, opt
        ops.append(o)

    def fc_options(act):
        opt = s.FullyConnectedOptionsT()
        opt.fusedActivationFunction, opt.keepNumDims = act, True
        return s.BuiltinOptions.FullyConnectedOptions, opt

    tok = tensor("tokens", [1, T], s.TensorType.INT32)
    if quantized:
        emb_scale = np.float32(0.02 * 5 / 127)
        emb_w = (V * D, lambda f: [f.write(np.clip(np.round(b / emb_scale), -127, 127).astype(np.int8).tobytes())
                                   for b in _weights(1, (V, D))])  # fmt: skip
        emb = tensor("embedding", [V, D], s.TensorType.INT8, emb_w, qparams([float(emb_scale)], [0]))
        g = tensor("x0/int8", [1, T, D], s.TensorType.INT8, quant=qparams([float(emb_scale)], [0]))
        x = tensor("x0", [1, T, D], s.TensorType.FLOAT32)
        operator(s.BuiltinOperator.GATHER, [emb, tok], [g], s.BuiltinOptions.GatherOptions, s.GatherOptionsT())
        operator(s.BuiltinOperator.DEQUANTIZE, [g], [x])
    else:
        emb = tensor("embedding", [V, D], s.TensorType.FLOAT32, float_writer(1, (V, D)))
        x = tensor("x0", [1, T, D], s.TensorType.FLOAT32)
        operator(s.BuiltinOperator.GATHER, [emb, tok], [x], s.BuiltinOptions.GatherOptions, s.GatherOptionsT())

    def weight(name, seed, shape):
        if not quantized:
            return tensor(name, shape, s.TensorType.FLOAT32, float_writer(seed, shape))
        scales, w = int8_rows(seed, shape)
        return tensor(name, shape, s.TensorType.INT8, w, qparams(scales.tolist(), [0] * len(scales)))

    for layer in range(L):
        w1 = weight(f"block{layer}/w1", 10 + 2 * layer, (F, D))
        w2 = weight(f"block{layer}/w2", 11 + 2 * layer, (D, F))
        h = tensor(f"block{layer}/hidden", [1, T, F], s.TensorType.FLOAT32)
        y = tensor(f"block{layer}/proj", [1, T, D], s.TensorType.FLOAT32)
        nx = tensor(f"x{layer + 1}", [1, T, D], s.TensorType.FLOAT32)
        operator(s.BuiltinOperator.FULLY_CONNECTED, [x, w1, -1], [h], *fc_options(s.ActivationFunctionType.RELU))
        operator(s.BuiltinOperator.FULLY_CONNECTED, [h, w2, -1], [y], *fc_options(s.ActivationFunctionType.NONE))
        operator(s.BuiltinOperator.ADD, [x, y], [nx], s.BuiltinOptions.AddOptions, s.AddOptionsT())
        x = nx
    wh = weight("head/w", 99, (H, D))
    logits = tensor("logits", [1, T, H], s.TensorType.FLOAT32)
    operator(s.BuiltinOperator.FULLY_CONNECTED, [x, wh, -1], [logits], *fc_options(s.ActivationFunctionType.NONE))

    sg = s.SubGraphT()
    sg.tensors, sg.inputs, sg.outputs, sg.operators, sg.name = tensors, [tok], [logits], ops, b"main"
    m = s.ModelT()
    m.version, m.subgraphs, m.buffers, m.description = 3, [sg], buffers, b"bench_big_transformer"
    m.operatorCodes = []
    for op in sorted(codes, key=codes.get):
        oc = s.OperatorCodeT()
        oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = op, min(op, 127), 1
        m.operatorCodes.append(oc)

    def pack() -> bytes:
        b = flatbuffers.Builder(1 << 20)
        b.Finish(m.Pack(b), file_identifier=b"TFL3")
        return bytes(b.Output())

    head = pack()
    pos = -(-len(head) // 4096) * 4096
    for bi, _ in data:  # offsets are fixed-size fields: the second pack has the same size
        buffers[bi].offset = pos
        pos = -(-(pos + buffers[bi].size) // 64) * 64
    head = pack()
    with open(path, "wb") as f:
        f.write(head)
        for bi, writer in data:
            f.seek(buffers[bi].offset)
            writer(f)


_PLAIN = r"""
import json, sys, threading, time
import numpy as np
from ai_edge_litert.interpreter import Interpreter
t0 = time.perf_counter()
def run(p, out):
    it = Interpreter(model_path=p)
    it.allocate_tensors()
    i, o = it.get_input_details()[0], it.get_output_details()[0]
    for k in range(SAMPLES):
        it.set_tensor(i["index"], np.random.default_rng([0, k]).integers(0, 10, (1, T)).astype(np.int32))
        it.invoke()
        out.append(it.get_tensor(o["index"]))
outs = [[], []]
th = [threading.Thread(target=run, args=(p, o)) for p, o in zip(sys.argv[1:3], outs)]
[t.start() for t in th]; [t.join() for t in th]
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_rss_mb": int(hwm) / 1024}))
""".replace("SAMPLES", str(SAMPLES)).replace("(1, T)", f"(1, {T})")

_OURS = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
t0 = time.perf_counter()
from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
r = compare_models(sys.argv[1], sys.argv[2], CompareOptions(samples=SampleSettings(count=SAMPLES)))
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")][0].split()[1]
print(json.dumps({"seconds": time.perf_counter() - t0, "peak_rss_mb": int(hwm) / 1024, "layers": len(r.layers),
                  "output_sqnr_db": r.outputs[0].metrics.sqnr_db}))
""".replace("SAMPLES", str(SAMPLES))

_OPEN = r"""
import json, sys, time
sys.path.insert(0, sys.argv[3])
from inspector.core.tflite.model import Model
from inspector.core.compare.weights import analyze_tensors
t0 = time.perf_counter(); fm = Model(sys.argv[1]); t1 = time.perf_counter(); qm = Model(sys.argv[2]); t2 = time.perf_counter()
n = sum(len(sg.tensors) for sg in fm.subgraphs)
big = max(fm.main.tensors, key=lambda t: t.buffer_size)
t3 = time.perf_counter(); wa = analyze_tensors(fm, big, qm, qm.main.tensor_by_name(big.name)); t4 = time.perf_counter()
print(json.dumps({"open_float_s": t1 - t0, "open_quant_s": t2 - t1, "tensors": n,
                  "largest": f"{big.name} {list(big.shape)} ({big.buffer_size / 1e9:.2f} GB)", "histogram_s": t4 - t3,
                  "used": f"{wa.used_elements:,} of {wa.total_elements:,} values",
                  "sqnr_db": None if wa.metrics is None else wa.metrics.sqnr_db}))
"""


def _child(code: str, *args: str) -> dict:
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)
    if p.returncode:
        raise SystemExit(p.stderr[-3000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(REPO / ".fixture-cache" / "big-transformer"))
    ap.add_argument("--keep", action="store_true", help="keep the generated models")
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    free = shutil.disk_usage(folder).free
    if free < 10e9:
        print(f"skipped: {free / 1e9:.1f} GB free in {folder}, need 10 GB (models + the comparison's copy)")
        return 0
    fpath, qpath = folder / "transformer_float.tflite", folder / "transformer_int8.tflite"
    try:
        t0 = time.perf_counter()
        for p, q in ((fpath, False), (qpath, True)):
            if not p.exists():
                build(p, q)
        print(f"generated in {time.perf_counter() - t0:.0f} s: float {fpath.stat().st_size / 1e9:.2f} GB, "
              f"int8 {qpath.stat().st_size / 1e9:.2f} GB (weights after the flatbuffer); {os.cpu_count()} CPUs (shared)")
        o = _child(_OPEN, str(fpath), str(qpath), str(REPO))
        print(f"  open float model to {o['tensors']} parsed tensors: {o['open_float_s'] * 1e3:7.1f} ms  (target < 1000 ms)")
        print(f"  open int8 model:                        {o['open_quant_s'] * 1e3:7.1f} ms")
        print(f"  weight histogram + metrics of {o['largest']}: {o['histogram_s'] * 1e3:.0f} ms "
              f"({o['used']}; target < 1000 ms), SQNR {o['sqnr_db']:.1f} dB")
        plain = _child(_PLAIN, str(fpath), str(qpath))
        ours = _child(_OURS, str(fpath), str(qpath), str(REPO))
        print(f"  plain LiteRT, load + {SAMPLES} samples, both models on two threads: {plain['seconds']:6.1f} s, "
              f"peak RSS {plain['peak_rss_mb']:7.0f} MB")
        print(f"  ours, compare_models over {SAMPLES} samples ({ours['layers']} layers):      {ours['seconds']:6.1f} s, "
              f"peak RSS {ours['peak_rss_mb']:7.0f} MB, output SQNR {ours['output_sqnr_db']:.1f} dB")
        print(f"  ratios (same run, shared machine): time {ours['seconds'] / plain['seconds']:.2f}x (target <= 2x), "
              f"peak RSS {ours['peak_rss_mb'] / plain['peak_rss_mb']:.2f}x (target <= 1.2x)")
    finally:
        if not args.keep:
            for p in (fpath, qpath):
                p.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
