"""Re-run one sample of a comparison: its layerwise error, so a user sees where that input goes wrong.

`compare_one_sample(float_path, quant_path, options, index)` opens the same sample source as
`compare_models(..., options)` would (same file, count, seed and normalization, so sample `index`
is the same input), takes sample `index`, writes it to a private temporary .npz (inputs by
float-model input name, plus its label) and runs `compare_models` on that one sample. The result
says which sample it was (`inputs`, `sources`, `labels`). A top-level function of picklable
arguments: it runs in the worker process like `compare_models`.
"""

from __future__ import annotations

import dataclasses
import io
import tempfile
from pathlib import Path

import numpy as np

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.result import ComparisonResult
from inspector.core.errors import InputError
from inspector.core.progress import TaskState
from inspector.core.samples.settings import SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.samples.spec import LABELS_KEY, Sample
from inspector.core.tflite.model import load_model
from inspector.core.writing import atomic_write_bytes


def pick_sample(float_path: str, quant_path: str, options: CompareOptions, index: int) -> tuple[Sample, str, tuple[str, ...] | None]:
    """Sample `index` of the source `options` describe: (sample, source description, class names)."""
    fm, qm = load_model(float_path), load_model(quant_path)
    src = open_source(fm, qm, options.samples)
    if not 0 <= index < src.count:
        raise InputError(f"there is no sample #{index}: the inputs hold {src.count} samples", options.samples.source)
    for sample in src:
        if sample.index == index:
            return sample, src.description, src.class_names
    raise InputError(f"sample #{index} could not be read", options.samples.source)  # pragma: no cover


def sample_npz_bytes(sample: Sample) -> bytes:
    """One sample as .npz bytes: each input under its float-model input name, batch included."""
    arrays = {name: np.asarray(v) for name, v in zip(sample.names, sample.inputs, strict=True)}
    if sample.label is not None:
        arrays[LABELS_KEY] = np.array([sample.label], np.int64)
    buf = io.BytesIO()
    np.savez(buf, **arrays)  # type: ignore[arg-type]  # numpy's stub types **kwds like its allow_pickle flag
    return buf.getvalue()


def compare_one_sample(
    float_path: str,
    quant_path: str,
    options: CompareOptions | None,
    index: int,
    task: TaskState | None = None,
) -> ComparisonResult:
    """The layerwise comparison of sample `index` alone (see the module doc)."""
    opts = options or CompareOptions()
    sample, description, class_names = pick_sample(float_path, quant_path, opts, index)
    with tempfile.TemporaryDirectory(prefix="tqi-sample-") as d:
        path = Path(d) / f"sample_{index}.npz"
        atomic_write_bytes(path, sample_npz_bytes(sample))
        one = dataclasses.replace(opts, samples=SampleSettings(count=1, seed=opts.samples.seed, source=str(path)))
        result = compare_models(float_path, quant_path, one, task=task)
    return dataclasses.replace(
        result,
        inputs=f"sample #{index} ({sample.source}) of {description}",
        sources=(sample.source,),
        labels=(sample.label,),
        class_names=class_names,
        seed=opts.samples.seed,
    )
