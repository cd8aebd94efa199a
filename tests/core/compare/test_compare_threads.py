"""The threaded comparison (either model in the worker thread) gives exactly the single-thread
results: same per-layer sums in the same sample order, same kept values and outputs."""

from __future__ import annotations

import pytest

import inspector.core.compare.comparison as comparison
from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model


@pytest.mark.parametrize("slow", ["f", "q"])
def test_threaded_equals_single_thread(example_pair, monkeypatch, slow):
    f, q = (str(p) for p in example_pair)
    keep = frozenset(range(len(Model(q).main.tensors)))
    samples = SampleSettings(count=7, seed=5)
    one = compare_models(f, q, CompareOptions(samples=samples, threads=1, keep_values=keep, isolated=True))
    chosen: list[str] = []
    monkeypatch.setattr(comparison, "_slower", lambda seconds: chosen.append(slow) or slow)
    two = compare_models(f, q, CompareOptions(samples=samples, threads=2, keep_values=keep, isolated=True))
    assert chosen == [slow]  # the double-buffered path ran, with this model in the worker thread
    assert two.samples == one.samples == 7
    for a, b in zip(one.layers, two.layers, strict=True):
        assert a.metrics == b.metrics and a.isolated == b.isolated, a.tensor_name
    assert [o.metrics for o in one.outputs] == [o.metrics for o in two.outputs]
    assert one.per_sample_outputs is not None and two.per_sample_outputs is not None
    for x, y in zip(one.per_sample_outputs.quant, two.per_sample_outputs.quant, strict=True):
        assert all((a == b).all() for a, b in zip(x, y, strict=True))
    for t, kept in one.kept.items():
        assert (kept.float_values == two.kept[t].float_values).all() and (kept.quant_values == two.kept[t].quant_values).all()


def test_a_repeated_comparison_reuses_the_interpreters_and_a_cancelled_one_does_not(example_pair, monkeypatch):
    """The last pair's interpreter sets are kept for the next run of the same pair (same
    numbers); a run cancelled mid-way keeps nothing (its views may still be alive), and the
    next run builds fresh ones and still gives the same numbers."""
    from inspector.core.errors import Cancelled
    from inspector.core.progress import TaskState

    f, q = (str(p) for p in example_pair)
    built: list[int] = []
    real = comparison._Slot.__init__
    monkeypatch.setattr(comparison._Slot, "__init__", lambda self, *a: built.append(1) or real(self, *a))
    comparison._idle_slots.clear()
    opts = CompareOptions(samples=SampleSettings(count=5, seed=2))
    first = compare_models(f, q, opts)
    assert len(built) == 2  # two sets (double buffering)
    again = compare_models(f, q, opts)
    assert len(built) == 2 and [x.metrics for x in again.layers] == [x.metrics for x in first.layers]

    task = TaskState(on_report=lambda fraction, _m: fraction is not None and fraction >= 0.4 and task.cancel())
    with pytest.raises(Cancelled):
        compare_models(f, q, opts, task=task)
    assert comparison._idle_slots == {}
    third = compare_models(f, q, opts)
    assert len(built) == 4 and [x.metrics for x in third.layers] == [x.metrics for x in first.layers]
    reference = CompareOptions(samples=SampleSettings(count=5, seed=2), runtime="reference")
    compare_models(f, q, reference)  # another runtime: other interpreters, and only the last pair's are kept
    assert len(built) == 6 and list(comparison._idle_slots) == [comparison._slot_key(Model(f), Model(q), reference)]
