"""The comparison run in the worker process, so a LiteRT crash cannot take the caller down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspector.core.compare.comparison import compare_models
from inspector.core.progress import TaskState
from inspector.core.runtime.worker import WorkerProcess, run_isolated


def compare_in_worker(
    float_path: str | Path,
    quant_path: str | Path,
    options: Any = None,
    *,
    task: TaskState | None = None,
    timeout: float | None = None,
    worker: WorkerProcess | None = None,
    pair_check: Any = None,
) -> Any:
    """`compare.compare_models` in the worker: same arguments, same result (a ComparisonResult)."""
    return run_isolated(
        compare_models, str(float_path), str(quant_path), options, kwargs={"pair_check": pair_check},
        task=task, timeout=timeout,
        step="comparing (running both models over the samples)", models=(str(float_path), str(quant_path)), worker=worker,
    )  # fmt: skip
