"""Rebuild the bundled example (`make examples`; needs TensorFlow and scikit-learn, the `[dev]` extra).

A small CNN is trained on scikit-learn's handwritten digits (1,797 8x8 images shipped inside the
package: no download), then converted by TensorFlow's converter:

example_float.tflite  the trained float32 model: input "image" (1, 64), the 64 pixels of a digit
                      (0..16 scaled to 0..1) as scikit-learn gives them; a reshape to 8x8, conv,
                      depthwise and 1x1 conv blocks (batch norm folded, ReLU6; each op named by
                      its block: conv1, dw1, pw1, dw2, pw2), global average pool, dense `logits`,
                      softmax over the 10 digits
example_int8.tflite   its full-int8 twin (float I/O) with a realistic mistake: the representative
                      dataset is a handful of training images taken from an input pipeline that
                      still dims them (a contrast augmentation left on), so no calibration image
                      reaches full ink. The input's int8 range stops at about 0.69, bright strokes
                      clip, and accuracy drops by several points. The app diagnoses `clipping` at
                      op 1 (the reshape, which keeps the input's range) and proposes `recalibrate`,
                      which re-derives the range from the comparison's samples (calibrating on the
                      first 2/3 of the bundled inputs, measuring on the held-out rest).
example_inputs.npz    BUNDLED digits that neither training nor the int8 calibration saw: "image"
                      (the model input's name), float32 (N, 64), and "labels" (N,) int64, the
                      true digit of each image

The build is deterministic (fixed seeds, one thread, TensorFlow's deterministic ops): running it
twice writes the same bytes (`--check` rebuilds into a temporary folder and compares).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
NAMES = ("example_float.tflite", "example_int8.tflite", "example_inputs.npz")

SEED = 0
BUNDLED = 192  # held-out labelled inputs shipped with the pair (the app calibrates on 2/3, measures on 1/3)
EPOCHS = 15
CALIBRATION = 8  # "a handful" of training images
DIMMED = (0.45, 0.75)  # the leftover augmentation: each calibration image's contrast scaled by a factor in this range


def digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train images, train labels, bundled images, bundled labels): a fixed shuffle of the 1,797
    digits, the first BUNDLED held out."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.data / 16.0).astype(np.float32)
    y = d.target.astype(np.int64)
    order = np.random.default_rng(SEED).permutation(len(x))
    held, train = order[:BUNDLED], order[BUNDLED:]
    return x[train], y[train], x[held], y[held]


def deterministic_tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(1)
    tf.config.threading.set_inter_op_parallelism_threads(1)
    tf.keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    return tf


def build_model(tf, batch: int | None = None):
    """The network; `batch=1` for conversion (static shapes: the reshape stays one RESHAPE op)."""
    layers = tf.keras.layers

    def block(h, conv, name: str):  # conv, batch norm, ReLU6: one op once converted, named `name`
        h = conv(h)
        h = layers.BatchNormalization(name=f"{name}_bn")(h)
        return layers.ReLU(6.0, name=name)(h)

    inp = tf.keras.Input((64,), batch_size=batch, name="image")
    h = layers.Reshape((8, 8, 1), name="to_8x8")(inp)
    h = block(h, layers.Conv2D(16, 3, padding="same", use_bias=False, name="conv1_conv"), "conv1")
    h = block(h, layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw1_conv"), "dw1")
    h = block(h, layers.Conv2D(32, 1, use_bias=False, name="pw1_conv"), "pw1")
    h = layers.MaxPooling2D(name="pool")(h)
    h = block(h, layers.DepthwiseConv2D(3, padding="same", use_bias=False, name="dw2_conv"), "dw2")
    h = block(h, layers.Conv2D(32, 1, use_bias=False, name="pw2_conv"), "pw2")
    h = layers.GlobalAveragePooling2D(name="gap")(h)
    h = layers.Dense(10, name="logits")(h)
    return tf.keras.Model(inp, layers.Softmax(name="probabilities")(h), name="digits")


def train(tf, x: np.ndarray, y: np.ndarray):
    """Trained with batches of 32; returned as the batch-1 model with the trained weights."""
    model = build_model(tf)
    model.compile(tf.keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=EPOCHS, batch_size=32, shuffle=True, verbose=0)
    one = build_model(tf, batch=1)
    one.set_weights(model.get_weights())
    return one


def calibration_images(x: np.ndarray) -> np.ndarray:
    """The mistake: a handful of training images, dimmed as the augmenting pipeline dims them."""
    rng = np.random.default_rng(SEED + 1)
    pick = rng.choice(len(x), CALIBRATION, replace=False)
    factors = rng.uniform(*DIMMED, size=CALIBRATION).astype(np.float32)
    return x[pick] * factors[:, None]


def convert(tf, model, calibration: np.ndarray | None) -> bytes:
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    if calibration is not None:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([img[None]] for img in calibration)
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return conv.convert()


def accuracy(model_bytes: bytes, images: np.ndarray, labels: np.ndarray) -> float:
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=model_bytes)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    hits = 0
    for img, label in zip(images, labels, strict=True):
        it.set_tensor(inp["index"], img[None])
        it.invoke()
        hits += int(np.argmax(it.get_tensor(out["index"])[0]) == label)
    return hits / len(labels)


def build(folder: Path) -> None:
    import io

    tf = deterministic_tf()
    xt, yt, xb, yb = digits()
    model = train(tf, xt, yt)
    float_bytes = convert(tf, model, None)
    int8_bytes = convert(tf, model, calibration_images(xt))
    from inspector.core.writing import atomic_write_bytes

    atomic_write_bytes(folder / NAMES[0], float_bytes)
    atomic_write_bytes(folder / NAMES[1], int8_bytes)
    buf = io.BytesIO()
    np.savez_compressed(buf, image=xb, labels=yb)
    atomic_write_bytes(folder / NAMES[2], buf.getvalue())
    fa, qa = accuracy(float_bytes, xb, yb), accuracy(int8_bytes, xb, yb)
    print(f"accuracy on the {len(yb)} bundled inputs: float {100 * fa:.2f} %, int8 {100 * qa:.2f} %")


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parents[2]))  # the repository's `inspector`, however this is run
    if "--check" in argv:  # rebuild elsewhere: the same bytes?
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp))
            differ = [n for n in NAMES if (Path(tmp) / n).read_bytes() != (HERE / n).read_bytes()]
        print("same bytes" if not differ else f"differ: {', '.join(differ)}")
        return 1 if differ else 0
    build(HERE)
    for n in NAMES:
        print(f"{n:24s} {(HERE / n).stat().st_size:>8,d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
