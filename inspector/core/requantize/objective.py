"""How good an edited model is: an objective tensor's SQNR against model A, size, latency.

`Objective` runs A once over the samples and keeps its values of the objective tensors (small:
model outputs, logits), so each edited model costs one run. A tensor that is a concatenation of
heads (`compare.concat_layout.output_layout`: boxes beside class scores) is read by its worst
part: the whole tensor's SQNR and each slice's, the lowest of them, so a collapsed score slice is
not hidden by the large values beside it (a detector's whole output read 50 dB with every score
lost). `latency_ms` is the median
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
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.concat_layout import ConcatLayout, output_layout
from inspector.core.compare.pairing import Pairing
from inspector.core.errors import InputError
from inspector.core.quantmath.quant import dequantize
from inspector.core.requantize.measure import runner_reading
from inspector.core.runtime.runner import ModelRunner
from inspector.core.samples.spec import Sample, feed, signature_feed
from inspector.core.tflite import edit as fe
from inspector.core.tflite.dtypes import numpy_dtype_name
from inspector.core.tflite.model import Model, Tensor, load_model
from inspector.core.tflite.rewrite import patch_outputs
from inspector.core.tflite.signatures import select_signature


@dataclass(frozen=True)
class Reading:
    """An objective's SQNR (dB): the lowest over its tensors and their slices, and which part that is."""

    sqnr_db: float
    part: str  # "" for a whole tensor; else e.g. "slice 4:7 of 'detections' (from op 11 LOGISTIC)"


class Objective:
    """SQNR of B's objective tensors in an edited model, against A's values (computed once)."""

    def __init__(
        self, fm: Model, qm: Model, pairing: Pairing, tensors: Sequence[int], samples: Sequence[Sample], runtime: str,
        signature: str | None = None,
    ) -> None:
        self.signature = signature  # fm and qm are seen through it; so is every edited model
        self.names = tuple(qm.main.tensors[t].name for t in tensors)
        self.layouts: tuple[ConcatLayout | None, ...] = tuple(output_layout(qm.main, t) for t in tensors)
        self.samples = samples
        self.runtime = runtime
        floats = []
        for t in tensors:
            f = pairing.float_for_quant(t)
            if f is None:
                raise InputError(f"tensor '{qm.main.tensors[t].name}' has no float counterpart", qm.path)
            floats.append(f)
        runner = runner_reading(fm, runtime, floats)
        self.ref = [[np.array(runner.run(feed(fm, s))[f], np.float64) for f in floats] for s in samples]
        self.top1: list[int] = []  # of the last model read
        self.like: Model | None = qm  # an edited model whose inputs and objective tensors read as qm's is fed and read as qm

    @property
    def has_slices(self) -> bool:
        """Is a concatenated tensor among the objective's (read by its worst slice)?"""
        return any(lay is not None for lay in self.layouts)

    def sqnr(self, data: bytes) -> float:
        return self.reading(data).sqnr_db

    def reading(self, data: bytes) -> Reading:
        """The lowest SQNR over the objective tensors and their slices in the model `data`."""
        sums, idx = self._sums(data), range(len(self.names))
        parts = [(_db(*sums[k][:, 0]), "") for k in idx]
        for k, lay in enumerate(self.layouts):
            for j, sl in enumerate(lay.slices if lay is not None else ()):
                src = "" if sl.producer_op is None else f" (from op {sl.producer_op} {sl.producer_type})"
                parts.append((_db(*sums[k][:, 1 + j]), f"slice {sl.start}:{sl.stop} of '{self.names[k]}'{src}"))
        return Reading(*min(parts, key=lambda p: p[0]))

    def relative_error(self, data: bytes) -> float:
        """Σ(x − y)² / Σx² of the objective tensors (their mean over the tensors): the output error
        energy blame shares are taken of (`blame.py`). A concatenated tensor counts as the mean of
        its slices' own relative errors, each slice against its own energy (like `reading`): a
        detector's collapsed scores beside pixel boxes are half its error, not 1e-5 of it. For one
        plain tensor −10·log10 of it is its SQNR."""
        sums = self._sums(data)
        return float(np.mean([np.mean([_ratio(*s[:, j]) for j in (range(1, s.shape[1]) if s.shape[1] > 1 else (0,))])
                              for s in sums]))  # fmt: skip

    def _sums(self, data: bytes) -> list[np.ndarray]:
        """Per objective tensor: (Σx², Σ(x − y)²) of the whole tensor and of each slice, over the samples."""
        with TempModel(data) as path:
            m = self.like if self.like is not None and same_reading(data, self.like, self.names) else None
            if m is None:
                m = select_signature(load_model(path), self.signature)
            idx = []
            for n in self.names:
                t = objective_tensor(m, n)
                if t is None:
                    raise InputError(f"the edited model has no tensor '{n}'")
                idx.append(t.index)
            content = patch_outputs(data, m.main.index, tuple(idx)) or _rebuilt_outputs(data, idx, m.main.index)
            runner = ModelRunner(m, self.runtime, content=content, exposed=tuple(idx))
            sums = [np.zeros((2, 1 + (len(lay.slices) if lay else 0))) for lay in self.layouts]  # (x², e²) per part
            self.top1 = []  # the first tensor's argmax per sample (a classifier's decision: blame's accuracy)
            for s, refs in zip(self.samples, self.ref, strict=True):
                values = runner.run(feed(m, s))
                self.top1.append(int(np.argmax(values[idx[0]])) if idx else -1)
                for k, ti in enumerate(idx):
                    tt = m.main.tensors[ti]
                    q = tt.quantization if tt.dtype.startswith("int") else None
                    y = dequantize(values[ti], q) if q is not None else np.asarray(values[ti], np.float64)
                    _add(sums[k], refs[k], y, self.layouts[k])
                del values
        return sums


def same_reading(data: bytes, like: Model, names: Sequence[str]) -> bool:
    """Does the edited model `data` keep `like`'s tensor table size, and its graph inputs' and the
    tensors `names`' indices, types and quantization? Then it is fed and read exactly as `like`
    (checked on the flatbuffer's few tensors, without parsing the whole model)."""
    import tflite

    try:
        fb = tflite.Model.GetRootAs(data, 0)
        sg = fb.Subgraphs(like.main.index)
        if sg.TensorsLength() != len(like.main.tensors) or sg.InputsLength() != len(like.main.inputs):
            return False
        wanted = list(like.main.inputs)
        for n in names:
            t = like.main.tensor_by_name(n)
            if t is None:
                return False
            wanted.append(t.index)
        for i in wanted:
            t, ours = sg.Tensors(i), like.main.tensors[i]
            q = t.Quantization()
            scales = tuple(float(v) for v in q.ScaleAsNumpy()) if q is not None and q.ScaleLength() else ()
            zps = tuple(int(v) for v in q.ZeroPointAsNumpy()) if q is not None and q.ZeroPointLength() else ()
            theirs = ours.quantization
            if (t.Name() or b"").decode() != ours.name or numpy_dtype_name(t.Type()) != ours.dtype \
                    or (scales != (theirs.scales if theirs is not None else ())) \
                    or (theirs is not None and zps and zps != theirs.zero_points[: len(zps)]):
                return False
        return all(sg.Inputs(k) == like.main.inputs[k] for k in range(sg.InputsLength()))
    except Exception:
        return False


def _ratio(signal: float, error: float) -> float:
    return error / signal if signal > 0 else (0.0 if error == 0 else math.inf)


def _add(sums: np.ndarray, ref: np.ndarray, y: np.ndarray, layout: ConcatLayout | None) -> None:
    """Add one sample's Σx² and Σ(x−y)² of the whole tensor and of each slice along the layout's axis."""
    err = ref - y
    sums[:, 0] += (float(np.sum(ref**2)), float(np.sum(err**2)))
    if layout is None or ref.shape != np.shape(y) or ref.ndim <= layout.axis:
        return
    r, e = np.moveaxis(ref, layout.axis, 0), np.moveaxis(err, layout.axis, 0)
    for j, sl in enumerate(layout.slices):
        sums[:, 1 + j] += (float(np.sum(r[sl.start : sl.stop] ** 2)), float(np.sum(e[sl.start : sl.stop] ** 2)))


def _db(signal: float, error: float) -> float:
    if error == 0:
        return math.inf
    return -math.inf if signal == 0 else 10 * math.log10(signal / error)


def objective_tensor(m: Model, name: str) -> Tensor | None:
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
