"""The planted families of the fault zoo (issue 33 §5) through blame: each fault planted into a
trained model's int8 twin (clipping, coarse range, per-tensor depthwise weights, bias shift,
coarse weights: `diagnosis_fixtures`, by editing B's flatbuffer with the LiteRT utilities), an
outlier channel and concatenated detector heads (`inside_fixtures`, built by the TF converter) is
the first root cause, with the fix its kind calls for; its share and gain are numpy's on LiteRT
outputs of B and of B with the fix applied, on the held-out samples.

Measured: clipping 93 % of the output error (+11.6 dB), coarse range x16 90 % (+10.1 dB; at x12 it
costs the 37 dB output 2.8 dB, under the 3 dB a healthy model's root cause must gain, and its layer
says so), per-tensor depthwise 67 % (+4.8 dB), bias shift 99 % (+20.9 dB), coarse weights 96 %
(+13.8 dB), outlier channel 99.5 % (equalize, +23.2 dB), detector heads 100 % (keep the
concatenation float, +48.4 dB).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

from inspector.core.compare.options import CompareOptions
from inspector.core.requantize.blame import compare_and_blame
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.requantize.surgical import apply_plan
from inspector.core.samples.holdout import split_samples
from inspector.core.samples.settings import ALL, SampleSettings
from tests.helpers import diagnosis_fixtures as dx
from tests.helpers import inside_fixtures as ix
from tests.helpers.task_fixtures import TaskFixtures

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".fixture-cache"
EVAL = 40

# plant -> (edit of B, the planted op's name, the cause, the fix's edit)
PLANTS = {
    "clipping": (lambda d, op: dx.scale_output(d, op, 0.25), "conv2", "clipping", "recalibrate"),
    "coarse range": (lambda d, op: dx.scale_output(d, op, 16.0), "conv2", "resolution", "recalibrate"),
    "per-tensor depthwise": (dx.per_tensor_weights, "dw", "weight_channels", "per_channel"),
    "bias shift": (lambda d, op: dx.shift_bias(d, op, 3.0), "conv2", "bias_shift", "bias_correct"),
    "coarse weights": (lambda d, op: dx.coarsen_weights(d, op, 16), "conv2", "weight_rounding", "weight_rounding"),
}


def _outputs(model: bytes | str, images: np.ndarray) -> list[np.ndarray]:
    """Every output of `model` per image, dequantized, flattened and joined."""
    it = Interpreter(model_content=model) if isinstance(model, bytes) else Interpreter(model_path=model)
    it.allocate_tensors()
    inp = it.get_input_details()[0]
    ys = []
    for img in images:
        it.set_tensor(inp["index"], img.reshape(inp["shape"]).astype(np.float32))
        it.invoke()
        parts = []
        for out in it.get_output_details():
            y = np.array(it.get_tensor(out["index"]), np.float64)
            if out["dtype"] != np.float32:
                s, z = out["quantization"]
                y = (y - z) * s
            parts.append(y.reshape(-1))
        ys.append(np.concatenate(parts))
    return ys


def _check_share(f: str, q: str, result, settings: SampleSettings, images: np.ndarray, last: int = 0,
                 parts: tuple[slice, ...] = (slice(None),)) -> None:  # fmt: skip
    """The first root cause's share and fix gain against numpy: the output error energy of B and of
    B with the fix relative to A's outputs on the held-out samples; a concatenated output (`parts`
    of its last axis, `last` long) as the mean of its parts' relative errors (boxes in pixels
    beside scores in [0, 1])."""
    rc = result.root_causes[0]
    ev = slice(split_samples(len(images)).evaluation_start, None)
    x = np.stack(_outputs(f, images[ev]))
    fixed = apply_plan(f, q, fix_plan(rc.fix, settings)).model_bytes

    def rel(model) -> float:
        y = np.stack(_outputs(model, images[ev]))
        a, b = (v.reshape(len(v), -1, last) if last else v for v in (x, y))
        return float(np.mean([np.sum((a[..., p] - b[..., p]) ** 2) / np.sum(a[..., p] ** 2) for p in parts]))

    e_before, e_after = rel(q), rel(fixed)
    assert rc.fix_gain_db == pytest.approx(10 * np.log10(e_before / e_after), abs=1e-3)
    # the share is the intervention's (keeping the op float, or its fix where that is the intervention)
    assert rc.share == pytest.approx(1 - 10 ** (-rc.gain_db / 10), abs=1e-9)
    if rc.intervention == f"re-calibrate op {rc.op_index}":
        assert rc.share == pytest.approx(1 - e_after / e_before, abs=1e-4)


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    paths = dx.models(CACHE)
    folder = tmp_path_factory.mktemp("planted")
    npz = TaskFixtures(CACHE).npz(EVAL)
    with np.load(npz) as z:
        images = next(z[k] for k in z.files if z[k].dtype == np.float32)[:EVAL]
    return paths["diag_float"], paths["diag_int8"], folder, npz, images


@pytest.mark.parametrize("plant", list(PLANTS))
def test_the_planted_fault_is_the_root_cause(planted, plant):
    f, q, folder, npz, images = planted
    edit, name, cause, fix = PLANTS[plant]
    op = dx.op_index(q, name)
    b = folder / f"{plant.replace(' ', '_')}.tflite"
    b.write_bytes(edit(q.read_bytes(), op))
    settings = SampleSettings(count=EVAL, seed=1, source=str(npz))
    result = compare_and_blame(str(f), str(b), CompareOptions(samples=settings))
    rc = result.root_causes[0]
    assert (rc.op_index, rc.cause, rc.fix.edit, rc.fix.ops) == (op, cause, fix, (op,)), result.root_causes
    assert rc.share > 0.5 and rc.fix_gain_db > 3.0
    _check_share(str(f), str(b), result, settings, images)


def test_an_outlier_channel_is_equalized_at_its_producer():
    paths = ix.outlier_models(CACHE)
    f, q = str(paths["out_float"]), str(paths["out_int8"])
    npz = TaskFixtures(CACHE).npz(EVAL)
    settings = SampleSettings(count=EVAL, seed=1, source=str(npz))
    result = compare_and_blame(f, q, CompareOptions(samples=settings))
    rc = result.root_causes[0]
    assert (rc.cause, rc.fix.edit) == ("channel_imbalance", "equalize") and rc.fix.ops == (rc.op_index, rc.op_index + 1)
    assert rc.share > 0.9
    with np.load(npz) as z:
        images = next(z[k] for k in z.files if z[k].dtype == np.float32)[:EVAL]
    _check_share(f, q, result, settings, images)


def test_concatenated_detector_heads_keep_the_concatenation_float(tmp_path):
    paths = ix.detector_models(CACHE)
    f, q = str(paths["det_float"]), str(paths["det_int8"])
    images = ix.detector_images(48, 3)
    np.save(tmp_path / "det.npy", images)
    settings = SampleSettings(ALL, source=str(tmp_path / "det.npy"))
    result = compare_and_blame(f, q, CompareOptions(samples=settings))
    rc = result.root_causes[0]
    assert (rc.op_type, rc.cause, rc.fix.edit) == ("CONCATENATION", "mixed_ranges", "keep_float") and rc.op_index in rc.fix.ops
    assert rc.share > 0.9
    _check_share(f, q, result, settings, images, ix.BOXES + ix.CLASSES, (slice(0, ix.BOXES), slice(ix.BOXES, None)))
