"""Samples from a .npy or .npz file (`allow_pickle=False`, .npy memory-mapped: streamed).

Arrays hold samples along their first axis: shape (N, *input shape without batch) gives N
samples of batch 1; an array shaped exactly like the input (batch included) or like one sample
without its batch dim gives one sample. .npz keys are matched to input tensor names, then to
signature input names; a model with one input also takes the file's only (non-label) array,
or one array per sample (`sample_0`, `sample_1`, … : any names ending in their number, each
shaped like one sample with or without its batch dim), stacked in that order.
A `labels` array of N integers, if present, becomes each sample's label.
An array whose name is not its input's is said in the source's description ("array 'x' feeds
input 'image'"); several arrays that could feed one input, none named after it, are refused.
"""

from __future__ import annotations

import re
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from inspector.core.errors import InputError
from inspector.core.samples.spec import (
    LABELS_KEY,
    InputSpec,
    Sample,
    SampleSource,
    input_specs,
    shape_fits,
)
from inspector.core.tflite.dtypes import QUANTIZED_DTYPES
from inspector.core.tflite.model import Model


def _load(path: Path) -> dict[str, np.ndarray]:
    try:
        if path.suffix.lower() == ".npy":
            return {"": np.load(path, mmap_mode="r", allow_pickle=False)}
        with np.load(path, allow_pickle=False) as z:
            return {k: z[k] for k in z.files}
    except ValueError as e:
        msg = str(e)
        if "pickle" in msg.lower():
            msg = "holds Python objects (pickled); only plain numeric arrays are read"
        raise InputError(f"cannot read arrays: {msg}", str(path)) from e
    except (OSError, zipfile.BadZipFile, EOFError, zlib.error) as e:  # zlib: a damaged compressed member
        raise InputError(f"cannot read arrays: {e}", str(path)) from e


def _per_sample(specs: list[InputSpec], arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
    """One array per sample for a single-input model ('sample_0', 'sample_1', …): stacked into
    one array (key '') in the order of the names' numbers; None when the file is not laid out so."""
    if len(specs) != 1:
        return None
    spec = specs[0]
    data = {k: v for k, v in arrays.items() if k != LABELS_KEY}
    if len(data) < 2 or any(c is not None and c in data for c in (spec.name, spec.key)):
        return None
    found = {k: re.search(r"(\d+)$", k) for k in data}
    numbered = {k: m for k, m in found.items() if m is not None}
    if len(numbered) != len(data):
        return None
    one = spec.shape[1:] if spec.shape else ()
    sig = spec.shape_signature[1:] if spec.shape_signature else ()
    rows = []
    for k in sorted(data, key=lambda k: (int(numbered[k].group(1)), k)):
        a = np.asarray(data[k])
        if a.ndim == len(one) + 1 and a.shape[0] == 1:
            a = a[0]
        if a.ndim != len(one) or not shape_fits(a.shape, one, sig):
            return None
        rows.append(a)
    if len({r.shape for r in rows}) != 1 or len({r.dtype for r in rows}) != 1:
        return None
    out = {"": np.stack(rows)}
    if LABELS_KEY in arrays:
        out[LABELS_KEY] = arrays[LABELS_KEY]
    return out


def _match_keys(specs: list[InputSpec], arrays: dict[str, np.ndarray], path: Path) -> list[str]:
    data_keys = [k for k in arrays if k != LABELS_KEY]
    chosen = []
    for spec in specs:
        for cand in (spec.name, spec.key):
            if cand is not None and cand in arrays:
                chosen.append(cand)
                break
        else:
            if len(specs) == 1 and len(data_keys) == 1:
                chosen.append(data_keys[0])
            else:
                want = " or ".join(repr(c) for c in (spec.name, spec.key) if c)
                has = ", ".join(map(repr, data_keys[:6])) + (f" and {len(data_keys) - 6} more" if len(data_keys) > 6 else "")
                if len(specs) == 1 and len(data_keys) > 1:  # any of them could be it: never guessed
                    raise InputError(
                        f"ambiguous: {len(data_keys)} arrays ({has}) and none named {want}, so which one feeds the "
                        f"input is not known (name it {want}, or give one array per sample named sample_0, sample_1, …)",
                        str(path),
                    )
                raise InputError(
                    f"no array for input {want}; the file has {has or 'no arrays'} "
                    f"(name it {want}, or for one input give one array per sample named sample_0, sample_1, …)",
                    str(path),
                )
    return chosen


def _samples_axis(spec: InputSpec, arr: np.ndarray, key: str, path: Path) -> bool:
    """True when arr stacks samples along axis 0; False when arr is one sample."""
    one = spec.shape[1:] if spec.shape else ()
    sig = spec.shape_signature[1:] if spec.shape_signature else ()
    where = f"array '{key}'" if key else "the array"
    if arr.ndim == len(spec.shape) and spec.shape and shape_fits(arr.shape[1:], one, sig):
        return True
    if arr.ndim == len(spec.shape) - 1 and shape_fits(arr.shape, one, sig):
        return False
    raise InputError(
        f"input '{spec.name}' expects samples of shape {list(spec.shape_signature)} "
        f"(batch first), but {where} has shape {list(arr.shape)}",
        str(path),
    )


def _check_dtype(spec: InputSpec, arr: np.ndarray, key: str, path: Path) -> None:
    float_input = spec.dtype.startswith("float") or spec.dtype in QUANTIZED_DTYPES
    ok = np.issubdtype(arr.dtype, np.floating) if float_input else (
        np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_
    )
    if spec.dtype in QUANTIZED_DTYPES and not np.issubdtype(arr.dtype, np.floating):
        ok = False
    if not ok:
        want = "float values" if float_input else f"{spec.dtype} values"
        raise InputError(f"input '{spec.name}' takes {want}, but array '{key or path.name}' is {arr.dtype}", str(path))


def _check_finite(arr: np.ndarray, key: str, path: Path) -> None:
    """Float inputs must be finite once read as float32 (NaN, ±inf or beyond float32's range give
    errors without meaning, and a JSON that cannot hold them); found by the fuzz of issue 34."""
    if not np.issubdtype(arr.dtype, np.floating):
        return
    bad = ~np.isfinite(np.asarray(arr, np.float32))
    if bad.any():
        first = int(np.argwhere(bad)[0][0]) if bad.ndim else 0
        raise InputError(f"array '{key or path.name}' holds {int(bad.sum()):,} NaN or infinite value(s) as float32 "
                         f"(the first at index {first} of its first axis); inputs must be finite", str(path))  # fmt: skip


def array_source(float_model: Model, path: Path, count: int | None) -> SampleSource:
    specs = input_specs(float_model)
    raw = _load(path)
    arrays = _per_sample(specs, raw) or raw
    numbered = [k for k in raw if k != LABELS_KEY] if arrays is not raw else []
    keys = _match_keys(specs, arrays, path)
    stacked = []
    n_avail = None
    for spec, key in zip(specs, keys, strict=True):
        arr = arrays[key]
        _check_dtype(spec, arr, key, path)
        _check_finite(arr, key, path)
        st = _samples_axis(spec, arr, key, path)
        stacked.append(st)
        n = arr.shape[0] if st else 1
        if n_avail is not None and n != n_avail:
            raise InputError(f"arrays hold different numbers of samples ({n_avail} and {n} in '{key}')", str(path))
        n_avail = n
    n_avail = n_avail or 0
    labels = arrays.get(LABELS_KEY)
    if labels is not None:
        labels = np.asarray(labels).reshape(-1)
        if labels.size != n_avail or not np.issubdtype(labels.dtype, np.integer):
            raise InputError(
                f"'{LABELS_KEY}' must hold {n_avail} integers (one per sample), has {labels.size} {labels.dtype}",
                str(path),
            )
    n = n_avail if count is None else min(count, n_avail)
    names = tuple(s.name for s in specs)

    def make() -> Iterator[Sample]:
        for i in range(n):
            values: list[np.ndarray] = []
            for _spec, key, st in zip(specs, keys, stacked, strict=True):
                a = arrays[key]
                v = np.asarray(a[i : i + 1] if st else a[None])
                values.append(v.astype(np.float32) if np.issubdtype(v.dtype, np.floating) else v.copy())
            label = None if labels is None else int(labels[i])
            yield Sample(i, f"{path.name}[{i}]", values, label, names)

    mapping = _mapping(specs, keys, numbered)
    return SampleSource(n, make, f"{n} samples from {path.name}" + (f" ({mapping})" if mapping else ""))


def _mapping(specs: list[InputSpec], keys: list[str], numbered: list[str]) -> str:
    """Which array feeds which input, where an array's name is not its input's ("" where every
    array is named after its input): said in the description, so no array is used silently."""
    said = []
    for spec, key in zip(specs, keys, strict=True):
        if key == "" and numbered:
            said.append(f"arrays {numbered[0]} … {numbered[-1]} ({len(numbered)}, one per sample) feed input '{spec.name}'")
        elif key not in (spec.name, spec.key):
            said.append(f"array '{key}' feeds input '{spec.name}'" if key else f"the array feeds input '{spec.name}'")
    return "; ".join(said)
