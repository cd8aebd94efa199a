"""Regenerate the bundled example pair (run with `make examples`; needs TensorFlow).

example_float.tflite  a small float32 CNN (conv, depthwise, residual add, pool, dense, softmax)
example_int8.tflite   its full-int8 twin (float I/O), calibrated on smooth random images
example_inputs.npz    8 sample images, key "image" (the model input's name), and "labels": one
                      class index per image (0..9, the model's 10 classes)

The example network is not trained on a real data set, so no image has a true class of its own.
Its labels are what the float model predicts for each image (the float reference's top-1 class):
accuracy then reads as "the quantized model keeps the float model's answer", and the task
metrics, the accuracy drop and the per-class drop can be tried on the example. The float
model's accuracy on them is 100 % by construction.

`--labels-only` adds or refreshes the labels of the existing npz from the existing float model
without rebuilding the models (rebuilding would change the numbers the tests know).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
FLOAT = HERE / "example_float.tflite"
INPUTS = HERE / "example_inputs.npz"


def float_labels(images: np.ndarray) -> np.ndarray:
    """The float model's top-1 class for each image."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(FLOAT))
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    labels = []
    for img in images:
        it.set_tensor(inp["index"], img[None].astype(np.float32))
        it.invoke()
        labels.append(int(np.argmax(it.get_tensor(out["index"])[0])))
    return np.asarray(labels, np.int64)


def write_inputs(images: np.ndarray) -> None:
    np.savez(INPUTS, image=images, labels=float_labels(images))


def main(argv: list[str]) -> None:
    if "--labels-only" in argv:
        with np.load(INPUTS, allow_pickle=False) as z:
            images = z["image"]
        write_inputs(images)
    else:
        sys.path.insert(0, str(HERE.parents[2] / "tests"))
        from fixture_models import convert, keras_cnn, representative_images

        km = keras_cnn(seed=7)
        FLOAT.write_bytes(convert(km, "float"))
        (HERE / "example_int8.tflite").write_bytes(convert(km, "int8"))
        write_inputs(representative_images(8, seed=42))
    for p in sorted(HERE.glob("example_*")):
        print(f"{p.name:24s} {p.stat().st_size:>8,d} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
