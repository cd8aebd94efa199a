"""Task metrics equal an independent, loop-by-loop computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from inspector.core.compare.task import task_metrics
from inspector.core.compare.task_kind import choose_kind, is_score_vector


def _data(n=50, c=7, seed=0, noise=0.3):
    rng = np.random.default_rng(seed)
    f = [rng.normal(0, 1, (1, c)) for _ in range(n)]
    q = [x + rng.normal(0, noise, x.shape) for x in f]
    labels = [int(rng.integers(0, c)) for _ in range(n)]
    return f, q, labels


def test_accuracy_and_agreement_independent():
    f, q, labels = _data()
    r = task_metrics(f, q, labels)
    n = len(f)
    fa = sum(int(np.argmax(f[i]) == labels[i]) for i in range(n)) / n
    qa = sum(int(np.argmax(q[i]) == labels[i]) for i in range(n)) / n
    agree1 = sum(int(np.argmax(f[i]) == np.argmax(q[i])) for i in range(n)) / n
    agree5 = 0
    for i in range(n):
        top5 = sorted(range(f[i].size), key=lambda k, i=i: -q[i].ravel()[k])[:5]
        agree5 += int(np.argmax(f[i]) in top5)
    assert r.kind == "classification"
    assert r.float_accuracy == pytest.approx(fa) and r.quant_accuracy == pytest.approx(qa)
    assert r.accuracy_drop_pct == pytest.approx(100 * (fa - qa))
    assert r.top1_agreement == pytest.approx(agree1) and r.top5_agreement == pytest.approx(agree5 / n)
    assert 0 < agree1 < 1, "the test data must contain both agreeing and flipped samples"
    for o, x, y in zip(r.outcomes, f, q, strict=True):
        e = (x - y).ravel()
        assert o.output_sqnr_db == pytest.approx(10 * math.log10(np.sum(x**2) / np.sum(e**2)))
        assert o.max_abs == pytest.approx(np.abs(e).max())


def test_worst_samples_flipped_first_then_lowest_sqnr():
    f, q, labels = _data(seed=3)
    r = task_metrics(f, q, labels)
    worst = r.worst(len(f))
    flipped = [o for o in worst if o.flipped]
    assert flipped and worst[: len(flipped)] == flipped
    sq = [o.output_sqnr_db for o in flipped]
    assert sq == sorted(sq)
    rest = [o.output_sqnr_db for o in worst[len(flipped):]]
    assert rest == sorted(rest)
    js = r.to_json(worst=5)
    assert [w["index"] for w in js["worst_samples"]] == [o.index for o in worst[:5]]
    assert set(js["worst_samples"][0]) >= {"index", "source", "label", "float_pred", "quant_pred", "output_sqnr_db"}


def test_per_class_drop():
    f, q, labels = _data(n=80, seed=5)
    r = task_metrics(f, q, labels)
    for c, d in r.per_class.items():
        idx = [i for i in range(len(f)) if labels[i] == c]
        fc = np.mean([np.argmax(f[i]) == c for i in idx])
        qc = np.mean([np.argmax(q[i]) == c for i in idx])
        assert d["count"] == len(idx) and d["drop_pct"] == pytest.approx(100 * (fc - qc))


def test_without_labels_accuracy_is_none():
    f, q, _ = _data()
    r = task_metrics(f, q, None, kind="classification")
    assert r.float_accuracy is None and r.quant_accuracy is None and r.accuracy_drop_pct is None
    assert r.top1_agreement is not None
    js = r.to_json()
    assert js["float_accuracy"] is None and js["quant_accuracy"] is None


def test_other_outputs_and_kind_detection():
    assert is_score_vector((1, 10)) and is_score_vector((1, 1, 1, 1001))
    assert not is_score_vector((1, 20, 4)) and not is_score_vector((1, 64, 64, 3)) and not is_score_vector((1, 1))
    # A vector is classification only with a probability producer, labels, or the user's word.
    assert choose_kind((1, 10), "SOFTMAX", False)[0] == "classification"
    assert choose_kind((1, 10), None, True)[0] == "classification"
    assert choose_kind((1, 10), None, False)[0] == "regression"
    assert choose_kind((1, 10), None, False, "classification")[0] == "classification"
    assert choose_kind((1, 20, 4), "SOFTMAX", True)[0] == "regression"
    assert choose_kind((1, 10), "SOFTMAX", True, "other")[0] == "regression"  # the old name
    rng = np.random.default_rng(1)
    f = [rng.normal(0, 1, (1, 8, 4)) for _ in range(5)]
    r = task_metrics(f, [x.copy() for x in f], labels=[1] * 5)
    assert r.kind == "regression" and r.top1_agreement is None and r.float_accuracy is None
    assert all(math.isinf(o.output_sqnr_db) for o in r.outcomes)
    assert r.to_json()["per_sample_sqnr_db"] == [None] * 5
    r2 = task_metrics(f, [x * 0.9 for x in f], kind="other")
    assert all(o.output_sqnr_db == pytest.approx(20.0) for o in r2.outcomes)


def test_mismatched_lengths_rejected():
    with pytest.raises(ValueError):
        task_metrics([np.zeros((1, 3))], [])
