"""The bundled example's inputs carry labels consistent with its task (10-class classification):
the float model's own top-1 class per image, so accuracy and per-class drop can be tried."""

from __future__ import annotations

import numpy as np
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.paths import example_inputs, example_pair


def test_example_labels_are_the_float_models_classes():
    f, _ = example_pair()
    with np.load(example_inputs(), allow_pickle=False) as z:
        images, labels = z["image"], z["labels"]
    assert labels.dtype.kind == "i" and labels.shape == (len(images),) == (8,)
    it = Interpreter(model_path=str(f))
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    assert out["shape"][-1] == 10 and labels.min() >= 0 and labels.max() < 10
    preds = []
    for img in images:
        it.set_tensor(inp["index"], img[None])
        it.invoke()
        preds.append(int(np.argmax(it.get_tensor(out["index"]))))
    assert labels.tolist() == preds
    assert len(set(preds)) >= 3  # several classes, so per-class drop has something to show


def test_example_compare_has_accuracy_and_per_class_drop():
    f, q = example_pair()
    result = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=None, source=str(example_inputs()))))
    assert result.samples_are_random is False
    t = result.task()
    task = t.to_json()
    assert task["float_accuracy"] == 1.0
    # Labels are the float predictions: agreement is the quantized accuracy, both counting a tied
    # int8 output (e.g. two classes at the same step: no class named) as a lost decision.
    decided = [not o.quant_tied and o.quant_pred == o.label for o in t.outcomes]
    assert task["top1_agreement"] == task["quant_accuracy"] == np.mean(decided)
    assert task["tied_samples"] == sum(o.float_tied for o in t.outcomes) == 0
    assert task["lost_decisions"] == sum(o.quant_tied for o in t.outcomes)
    assert task["per_class"] and sum(c["count"] for c in task["per_class"]) == 8
