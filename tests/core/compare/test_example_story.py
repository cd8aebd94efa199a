"""The bundled example tells the app's story (issue 29 §1): a CNN trained on real digits, an int8
twin a few points less accurate for one diagnosable cause, and the diagnosis' fix recovering the
drop on held-out labelled samples.

Accuracies are computed here with the LiteRT interpreter and numpy, not with the app's task
metrics; the fix runs through the same job as the GUI's Apply fix (`surgical_job` with
`fix_plan`), on the comparison's samples: calibrated on the first part, measured on the rest.
"""

from __future__ import annotations

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import cause_rows
from inspector.core.progress import TaskState
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.jobs import surgical_job
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.paths import example_inputs, example_pair


def _bundled() -> tuple[np.ndarray, np.ndarray]:
    with np.load(example_inputs(), allow_pickle=False) as z:
        return z["image"], z["labels"]


def _predictions(path: str, images: np.ndarray) -> np.ndarray:
    it = Interpreter(model_path=path)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    preds = []
    for img in images:
        it.set_tensor(inp["index"], img[None].astype(np.float32))
        it.invoke()
        preds.append(int(np.argmax(it.get_tensor(out["index"])[0])))
    return np.asarray(preds)


def _accuracy(path: str, images: np.ndarray, labels: np.ndarray) -> float:
    return float(np.mean(_predictions(path, images) == labels))


@pytest.fixture(scope="module")
def story(tmp_path_factory):
    """The comparison the first screen shows (bundled inputs, isolated error) and the fixed model."""
    f, q = (str(p) for p in example_pair())
    opts = CompareOptions(samples=SampleSettings(count=ALL, source=str(example_inputs())), isolated=True)
    before = compare_models(f, q, opts)
    worst = cause_rows(before.layers)[0]
    layer = before.layer_for_op(worst["op_index"])
    fixed = tmp_path_factory.mktemp("story") / "fixed.tflite"
    run = surgical_job(f, q, fix_plan(layer.diagnosis.fix), opts, str(fixed), (f, q), task=TaskState())
    return f, q, before, worst, layer, str(fixed), run


def test_bundled_inputs_are_labelled_digits_the_float_model_mostly_gets_right():
    images, labels = _bundled()
    assert images.dtype == np.float32 and labels.dtype.kind == "i" and len(images) == len(labels) >= 96
    assert labels.min() == 0 and labels.max() == 9 and len(set(labels.tolist())) == 10
    f, _ = example_pair()
    preds = _predictions(str(f), images)
    assert 0.9 <= np.mean(preds == labels) < 1.0  # a trained model: right on most, not its own predictions
    sk = pytest.importorskip("sklearn.datasets")  # the images are real digits with their true labels
    d = sk.load_digits()
    x = (d.data / 16.0).astype(np.float32)
    rows = {x[i].tobytes(): int(d.target[i]) for i in range(len(x))}
    assert all(rows.get(img.reshape(-1).tobytes()) == int(lab) for img, lab in zip(images, labels, strict=True))


def test_int8_is_several_points_less_accurate():
    images, labels = _bundled()
    f, q = (str(p) for p in example_pair())
    drop = _accuracy(f, images, labels) - _accuracy(q, images, labels)
    assert drop >= 0.02


def test_the_diagnosis_names_input_clipping_at_the_worst_layer(story):
    f, q, before, worst, layer, _fixed, _run = story
    assert worst["cause"] == "input_range" and worst["fix"] == {"edit": "recalibrate", "ops": [worst["op_index"]]}
    # independently: that op reads the model input as quantized, whose int8 range stops short of the
    # brightest pixels the bundled images have (1.0), so they clip
    it = Interpreter(model_path=q)
    ops = it._get_ops_details()
    op = ops[worst["op_index"]]
    producer = next(o for o in ops if op["inputs"][0] in o["outputs"])
    assert producer["op_name"] == "QUANTIZE" and producer["inputs"][0] == it.get_input_details()[0]["index"]
    scale, zp = next(t for t in it.get_tensor_details() if t["index"] == op["inputs"][0])["quantization"]
    images, _ = _bundled()
    assert scale * (127 - zp) < 0.9 and images.max() == 1.0
    clipped = np.mean(images > scale * (127 - zp) + scale / 2)
    assert clipped == pytest.approx(layer.metrics.clip_rate, rel=1e-6)
    # its own error is the worst of all layers with a cause of their own
    assert worst["op_index"] == layer.op_index and layer.metrics.sqnr_db < 20


def test_the_proposed_fix_recovers_most_of_the_drop_on_held_out_samples(story):
    f, q, before, worst, layer, fixed, run = story
    images, labels = _bundled()
    split = split_samples(len(images))
    assert split.evaluation == "held-out" and split.evaluation_count >= 32
    held = slice(split.evaluation_start, None)
    fa, qa, xa = (_accuracy(p, images[held], labels[held]) for p in (f, q, fixed))
    assert fa - qa > 0.02  # the drop shows on the held-out samples too
    assert fa - xa <= (fa - qa) / 2  # the fix at least halves it
    assert run.result.gain is not None and run.result.gain.after_db > run.result.gain.before_db + 10


def test_the_cli_applies_the_same_fix_to_the_same_bytes(story, tmp_path):
    """`requantize FLOAT QUANT --recalibrate op:N --inputs example_inputs.npz` (the CLI's route to
    the diagnosis' fix) writes the model the GUI's Apply fix wrote."""
    from inspector.cli import main

    f, q, _before, worst, _layer, fixed, _run = story
    out = tmp_path / "cli.tflite"
    assert main(["requantize", f, q, "--recalibrate", f"op:{worst['op_index']}", "--inputs", str(example_inputs()),
                 "--out", str(out)]) == 0  # fmt: skip
    assert out.read_bytes() == open(fixed, "rb").read()
