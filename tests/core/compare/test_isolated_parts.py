"""The isolated model cut in parts the two threads share: the cut (consecutive ops of about equal
cost, none empty), the split between the threads following what each waited, and the parts'
figures equal to the one model's (the same numbers whichever thread computes which part)."""

from __future__ import annotations

from types import SimpleNamespace

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.isolated import build_isolated_parts, split_by_cost
from inspector.core.compare.isolated_work import IsolatedWork
from inspector.core.compare.pairing import pair_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model


def test_split_by_cost_cuts_consecutive_runs_of_about_equal_cost():
    assert split_by_cost([1, 1, 1, 1], 2) == [2]
    assert split_by_cost([10, 1, 1, 1], 2) == [1]  # one heavy op: alone in its part
    assert split_by_cost([5, 5, 5, 5], 4) == [1, 2, 3]
    assert split_by_cost([1, 1, 1, 1, 1, 1, 1, 10], 4) == [5, 6, 7]  # never an empty part
    assert split_by_cost([1], 4) == [] and split_by_cost([], 2) == []  # fewer items than parts: fewer parts


def test_parts_cover_every_cut_out_op_once(example_pair):
    fm, qm = (load_model(p) for p in example_pair)
    pairing = pair_models(fm, qm)
    one = build_isolated_parts(fm, qm, pairing, 1)[0]
    parts = build_isolated_parts(fm, qm, pairing, 4)
    assert 1 < len(parts) <= 4
    ops = [q for p in parts for q in p.float_ops]
    assert sorted(ops) == sorted(one.float_ops) and len(set(ops)) == len(ops)
    assert all(p.notes == one.notes for p in parts)


def test_the_split_moves_a_part_to_the_thread_that_waits_less():
    work = IsolatedWork.__new__(IsolatedWork)
    work.plans = [SimpleNamespace()] * 4
    work.share, work.imbalance, work.seconds = 2, 0.0, [0.004] * 4
    work.balance(0.001)  # the calling thread waited 1 ms for the worker, less than a part takes: stay
    assert work.share == 2
    work.balance(0.012)  # it waited 12 ms (smoothed: 6.5), more than the 4 ms part: the worker gives one up
    assert work.share == 1 and work.imbalance == 0.0
    work.balance(-0.002)  # now the worker sits idle 2 ms: less than a part, stay
    assert work.share == 1
    work.balance(-0.012)  # idle 12 ms (smoothed 7): it takes one back
    assert work.share == 2
    for _ in range(10):
        work.balance(-0.05)
    assert work.share == 4  # never more parts than there are


def test_one_thread_and_two_give_the_same_isolated_figures(example_pair):
    f, q = (str(p) for p in example_pair)
    samples = SampleSettings(count=6, seed=4)
    one = compare_models(f, q, CompareOptions(samples=samples, threads=1))
    two = compare_models(f, q, CompareOptions(samples=samples, threads=2))
    assert any(lay.isolated is not None for lay in one.layers)
    assert [lay.isolated for lay in one.layers] == [lay.isolated for lay in two.layers]
