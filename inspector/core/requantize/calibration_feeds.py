"""Calibration feeds for the quantizer: one {signature input name: array} dict per sample.

Accepts what the rest of the app produces (`inspector.core.samples.spec.Sample` objects with an
`inputs` list in model-input order) and plain data: a dict of arrays, an array whose first axis
runs over samples (single-input models), or a list of any of these. Inputs are described by
`samples.spec.InputSpec` with `key` = the signature input name the quantizer feeds by.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from inspector.core.errors import InputError
from inspector.core.progress import TaskState
from inspector.core.samples.spec import InputSpec


def to_feeds(samples: Any, specs: Sequence[InputSpec]) -> list[dict[str, np.ndarray]]:
    """Normalise user samples to feeds; InputError naming the input when shapes do not fit."""
    if isinstance(samples, np.ndarray) or isinstance(samples, dict):
        if isinstance(samples, dict):
            arrays = {k: np.asarray(v) for k, v in samples.items()}
            n = len(next(iter(arrays.values()))) if arrays else 0
            batched = all(
                a.ndim == len(_spec_for(k, specs).shape) and a.shape[0] >= 1
                for k, a in arrays.items()
            )
            if batched and n > 1 and all(len(a) == n for a in arrays.values()):
                return [
                    _from_item({k: a[i : i + 1] for k, a in arrays.items()}, specs)
                    for i in range(n)
                ]
            return [_from_item(arrays, specs)]
        if len(specs) != 1:
            raise InputError(
                f"the model has {len(specs)} inputs; give samples as dicts or Sample objects"
            )
        return [_from_item([samples[i : i + 1]], specs) for i in range(len(samples))]
    items = list(samples)
    if not items:
        raise InputError("no calibration samples")
    return [_from_item(it, specs) for it in items]


def _spec_for(key: str, specs: Sequence[InputSpec]) -> InputSpec:
    for s in specs:
        if key in (s.key, s.name):
            return s
    names = ", ".join(str(s.key) for s in specs)
    raise InputError(f"sample input {key!r} is not an input of the model (inputs: {names})")


def _from_item(item: Any, specs: Sequence[InputSpec]) -> dict[str, np.ndarray]:
    if hasattr(item, "inputs"):  # inspector.core.samples.spec.Sample
        item = list(item.inputs)
    if isinstance(item, np.ndarray):
        item = [item]
    if isinstance(item, dict):
        pairs = [(_spec_for(k, specs), v) for k, v in item.items()]
    else:
        arrays = list(item)
        if len(arrays) != len(specs):
            raise InputError(
                f"a sample has {len(arrays)} arrays but the model has {len(specs)} inputs"
            )
        pairs = list(zip(specs, arrays, strict=True))
    feed = {}
    for spec, value in pairs:
        arr = np.asarray(value)
        if (
            arr.shape != spec.shape
            and arr.size == int(np.prod(spec.shape))
            and arr.ndim == len(spec.shape) - 1
        ):
            arr = arr.reshape(spec.shape)  # a sample given without its batch dimension
        if arr.shape != spec.shape:
            raise InputError(
                f"input {spec.key!r}: sample shape {arr.shape} does not fit the model's {spec.shape}"
            )
        feed[str(spec.key)] = arr.astype(spec.dtype, copy=False)
    missing = [str(s.key) for s in specs if s.key not in feed]
    if missing:
        raise InputError(f"a sample lacks input(s) {', '.join(missing)}")
    return feed


class Watched:
    """Feeds that report progress and stop (Cancelled) when asked, as the quantizer reads them.

    litert-quantizer iterates a calibration dataset twice: once to count it (`len(list(d))`),
    then to run it, so a generator arrives empty the second time and calibration silently
    records nothing. This is re-iterable; only the running pass reports progress.
    """

    def __init__(
        self,
        feeds: Sequence[dict[str, np.ndarray]],
        task: TaskState,
    ) -> None:
        self.feeds, self.task = list(feeds), task
        self.passes = 0

    def __len__(self) -> int:
        return len(self.feeds)

    def __iter__(self) -> Iterator[dict[str, np.ndarray]]:
        self.passes += 1
        counting = self.passes == 1
        for i, feed in enumerate(self.feeds):
            self.task.check()
            if not counting:
                self.task.report(i / max(len(self.feeds), 1), f"calibrating: sample {i + 1}/{len(self.feeds)}")
            yield feed
