"""What the data-dependent edits measure on the user's samples: the calibration part of them
(`samples.holdout.split_samples`, chosen by the caller `surgical.apply_plan`), so the held-out
rest can measure the gain honestly.

- `float_values`: values of A's tensors (paired with B tensors) over the samples, subsampled to
  at most MAX_VALUES per tensor (min and max are exact over all values).
- `channel_ranges`: per channel (last axis) min and max of A's tensors (paired with B tensors).
Both take an equalized P's output as B's equalization left it: A's values ÷ s (`compare/equalized.py`).
- `isolated_mean_error`: per output channel (last axis), the mean of dequantized(B output) minus
  the isolated float output (A's op fed the dequantized inputs B's op saw, `compare/isolated.py`),
  over the elements whose float value lies inside the output's representable range: saturation
  is not a bias, and shifting a channel to make up for its clipped values would move all others.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from inspector.core.compare.equalized import divided, float_divisors
from inspector.core.compare.isolated import IsolatedRunner, build_isolated_plan
from inspector.core.compare.pairing import Pairing
from inspector.core.errors import InputError
from inspector.core.quantmath.quant import dequantize, representable_range
from inspector.core.runtime.runner import ModelRunner
from inspector.core.samples.spec import Sample, feed
from inspector.core.tflite.model import Model
from inspector.core.tflite.rewrite import CACHE_MAX_BYTES, patch_outputs

MAX_VALUES = 1 << 20
SIGNIFICANCE = 2.0


@dataclass
class Observed:
    values: np.ndarray  # float64 subsample
    lo: float
    hi: float



def _float_counterparts(qm: Model, pairing: Pairing, tensors: Sequence[int]) -> dict[int, int]:
    """{B tensor: its A counterpart}; InputError for one that has none."""
    pairs = {}
    for t in tensors:
        f = pairing.float_for_quant(t)
        if f is None:
            raise InputError(f"tensor '{qm.main.tensors[t].name}' has no float counterpart in the float model", qm.path)
        pairs[t] = f
    return pairs


def runner_reading(model: Model, runtime: str, tensors: Sequence[int]) -> ModelRunner:
    """A runner whose outputs are only `tensors` (the flatbuffer's output list patched): the
    kernels fuse and delegate as in the model itself, and nothing else is copied out per run.
    A model too large to hold in memory, or one the patch cannot take, exposes every tensor."""
    wanted = tuple(dict.fromkeys(int(t) for t in tensors))
    if wanted and model.size_bytes <= CACHE_MAX_BYTES:
        content = patch_outputs(Path(model.path).read_bytes(), model.main.index, wanted)
        if content is not None:
            return ModelRunner(model, runtime, content=content, exposed=wanted)
    return ModelRunner(model, runtime)


def _float_runs(fm: Model, qm: Model, pairing: Pairing, samples: Sequence[Sample], runtime: str,
                reading: Sequence[int] | None = None) -> Iterator[dict[int, np.ndarray]]:  # fmt: skip
    """A's values of each sample (an equalized B: A's values of P's output ÷ s), one run at a time;
    `reading`: only these A tensors are needed."""
    runner = ModelRunner(fm, runtime) if reading is None else runner_reading(fm, runtime, reading)
    equalized = float_divisors(qm, pairing)
    for sample in samples:
        yield divided(runner.run(feed(fm, sample)), equalized)

def float_values(fm: Model, qm: Model, pairing: Pairing, tensors: Sequence[int], samples: Sequence[Sample], runtime: str = "optimized") -> dict[int, Observed]:
    """{B tensor: the float values of its A counterpart}."""
    pairs = _float_counterparts(qm, pairing, tensors)
    chunks: dict[int, list[np.ndarray]] = {t: [] for t in tensors}
    lo = dict.fromkeys(tensors, np.inf)
    hi = dict.fromkeys(tensors, -np.inf)
    per_sample = max(1, MAX_VALUES // max(len(samples), 1))
    rng = np.random.default_rng(0)
    for values in _float_runs(fm, qm, pairing, samples, runtime, tuple(pairs.values())):
        for t, f in pairs.items():
            v = np.asarray(values[f], np.float64).reshape(-1)
            lo[t] = min(lo[t], float(v.min()))
            hi[t] = max(hi[t], float(v.max()))
            if v.size > per_sample:
                v = v[np.sort(rng.choice(v.size, per_sample, replace=False))]
            chunks[t].append(v.copy())
        del values
    return {t: Observed(np.concatenate(chunks[t]), lo[t], hi[t]) for t in tensors}


def channel_ranges(fm: Model, qm: Model, pairing: Pairing, tensors: Sequence[int], samples: Sequence[Sample],
                   runtime: str = "optimized") -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """{B tensor: (min, max) per channel (last axis) of its A counterpart over the samples}."""
    pairs = _float_counterparts(qm, pairing, tensors)
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for values in _float_runs(fm, qm, pairing, samples, runtime):
        for t, f in pairs.items():
            v = np.asarray(values[f], np.float64)
            v = v.reshape(-1, v.shape[-1])
            lo, hi = v.min(axis=0), v.max(axis=0)
            if t in out:
                lo, hi = np.minimum(out[t][0], lo), np.maximum(out[t][1], hi)
            out[t] = (lo, hi)
        del values
    return out


def isolated_mean_error(
    fm: Model, qm: Model, pairing: Pairing, ops: Sequence[int], samples: Sequence[Sample],
    runtime: str = "optimized", significant: bool = False,
) -> dict[int, np.ndarray]:
    """{B op: mean(dequantized B output - isolated float output) per output channel}.

    `significant`: channels whose mean is within SIGNIFICANCE standard errors (of the per-sample
    means) of zero report 0: a bias correction there would only fit the samples' noise.
    """  # fmt: skip
    iso = build_isolated_plan(fm, qm, pairing)
    missing = [i for i in ops if i not in iso.float_ops]
    if missing:
        i = missing[0]
        raise InputError(f"op {i} ({qm.main.ops[i].type}) cannot be measured in isolation: {iso.notes.get(i, 'no float counterpart')}", qm.path)
    q_runner = ModelRunner(qm, runtime)
    i_runner = IsolatedRunner(fm, iso, runtime)
    sums: dict[int, np.ndarray] = {}
    counts: dict[int, np.ndarray] = {}
    per_sample: dict[int, list[np.ndarray]] = {}
    for sample in samples:
        qv = q_runner.run(feed(qm, sample))
        iv = i_runner.run(qv)
        for i in ops:
            q_out = qm.main.ops[i].outputs[0]
            f_out = fm.main.ops[iso.float_ops[i]].outputs[0]
            qt = qm.main.tensors[q_out]
            y = dequantize(qv[q_out], qt.quantization) if qt.quantization is not None else np.asarray(qv[q_out], np.float64)
            x = np.asarray(iv[f_out], np.float64)
            err = (y - x).reshape(-1, y.shape[-1])
            inside = np.ones_like(err, dtype=bool)
            if qt.quantization is not None and qt.dtype in ("int8", "int16"):
                lo, hi = representable_range(qt.quantization, qt.dtype)
                inside = ((x > lo.min()) & (x < hi.max())).reshape(err.shape)
            s_sum, s_count = np.where(inside, err, 0.0).sum(axis=0), inside.sum(axis=0)
            sums[i] = sums.get(i, 0) + s_sum
            counts[i] = counts.get(i, 0) + s_count
            per_sample.setdefault(i, []).append(s_sum / np.maximum(s_count, 1))
        del qv, iv
    out = {}
    for i in ops:
        mean = sums[i] / np.maximum(counts[i], 1)
        if significant and len(per_sample[i]) > 1:
            m = np.stack(per_sample[i])
            stderr = m.std(axis=0, ddof=1) / np.sqrt(len(m))
            mean = np.where(np.abs(mean) > SIGNIFICANCE * stderr, mean, 0.0)
        out[i] = mean
    return out
