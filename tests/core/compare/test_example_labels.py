"""The bundled example's inputs carry the true digit of each image (10-class classification), so
the comparison's accuracy, drop and per-class drop on them are the real ones: checked against
accuracies computed here with the LiteRT interpreter and numpy. (That the labels are scikit-learn's
own and the images unseen by training: tests/core/compare/test_example_story.py.)"""

from __future__ import annotations

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.paths import example_inputs, example_pair


def _predictions(path, images: np.ndarray) -> np.ndarray:
    it = Interpreter(model_path=str(path))
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    assert out["shape"][-1] == 10
    preds = []
    for img in images:
        it.set_tensor(inp["index"], img[None])
        it.invoke()
        v = it.get_tensor(out["index"]).ravel()
        preds.append(-1 if (v == v.max()).sum() > 1 else int(np.argmax(v)))
    return np.asarray(preds)


def test_example_compare_has_accuracy_and_per_class_drop():
    f, q = example_pair()
    with np.load(example_inputs(), allow_pickle=False) as z:
        images, labels = z["image"], z["labels"]
    result = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=None, source=str(example_inputs()))))
    assert result.samples_are_random is False
    t = result.task()
    task = t.to_json()
    fp, qp = _predictions(f, images), _predictions(q, images)  # -1 where the output's maximum is tied
    assert not (fp == -1).any()
    assert task["float_accuracy"] == np.mean(fp == labels) < 1.0
    # a tied int8 output names no class: wrong for accuracy, a lost decision for agreement
    assert task["quant_accuracy"] == np.mean(qp == labels) < task["float_accuracy"]
    assert task["top1_agreement"] == np.mean(qp == fp)
    assert task["tied_samples"] == 0 and task["lost_decisions"] == int((qp == -1).sum())
    per_class = {c["label"]: c for c in task["per_class"]}
    assert sorted(per_class) == list(range(10))
    for k, c in per_class.items():
        mine = labels == k
        assert c["count"] == int(mine.sum())
        assert c["float_accuracy"] == np.mean(fp[mine] == k) and c["quant_accuracy"] == np.mean(qp[mine] == k)
