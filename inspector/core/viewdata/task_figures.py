"""The task metrics of a result's first output (accuracy, agreement, worst samples), computed
once per result in the worker thread that made it (`layer_figures.warm`): the GUI thread used to
compute them when the result arrived (27 ms for the bundled example's 192 samples, more with
more samples)."""

from __future__ import annotations

from inspector.core.compare.result import ComparisonResult
from inspector.core.compare.task import TaskResult
from inspector.core.viewdata.layer_figures import kept, on_warm


def first_task(result: ComparisonResult) -> tuple[TaskResult | None, str]:
    """(result.task(), "") or (None, why the outputs cannot be read as a task); memoized."""
    return kept(result, "first task", lambda: _task(result))


def _task(result: ComparisonResult) -> tuple[TaskResult | None, str]:
    try:
        return result.task(), ""
    except (ValueError, IndexError) as e:  # outputs the task metrics cannot read
        return None, str(e)


on_warm(first_task)
