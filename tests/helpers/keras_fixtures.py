"""Keras / QAT fixtures for issue 20, built at test time in a subprocess (tf-keras needs
TF_USE_LEGACY_KERAS=1 before TensorFlow is imported; the test process may have imported TF's
Keras 3 already) and cached in `.fixture-cache/keras_h20_<key>/` (one folder, renamed into place).

- mlp_qat: Input 784 -> Dense 256 relu -> Dense 128 relu -> Dense 10 softmax, `quantize_model`,
  trained briefly on synthetic data (the question's model);
- cnn_qat: Conv2D -> BatchNormalization -> ReLU (twice) -> pooling -> Dense softmax, QAT
  (per-channel kernel ranges); cnn_float: the same CNN without QAT.
Each saved as .h5, .keras and a SavedModel folder (`<name>_sm`), plus the TF converter's int8
model (`<name>_int8.tflite`: QAT ranges, or post-training with the inputs) and inputs `.npz`.

    python -m tests.helpers.keras_fixtures OUT_DIR      # builds into OUT_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.helpers.cache import keras_built_folder

NAMES = ("mlp_qat", "cnn_qat", "cnn_float")
SAVED = {"h5": "{n}.h5", "keras": "{n}.keras", "saved_model": "{n}_sm"}


def keras_fixture_dir(root: Path) -> Path:
    """The folder of every Keras fixture, built (about 20 s) when missing."""
    return keras_built_folder(root, "keras_h20", "tests.helpers.keras_fixtures", __file__)


def _build(out: Path) -> None:
    import numpy as np
    import tensorflow as tf
    import tensorflow_model_optimization as tfmot
    import tf_keras as keras

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    keras.utils.set_random_seed(0)
    tf.config.experimental.enable_op_determinism()  # the same trained models on every build (CI builds afresh)
    L = keras.layers

    xm = rng.normal(0, 1, (512, 784)).astype(np.float32)
    ym = xm[:, :10].argmax(1)
    inp = keras.Input((784,), name="pixels")
    h = L.Dense(256, activation="relu", name="dense_1")(inp)
    h = L.Dense(128, activation="relu", name="dense_2")(h)
    mlp = keras.Model(inp, L.Dense(10, activation="softmax", name="probs")(h))
    mlp_qat = tfmot.quantization.keras.quantize_model(mlp)
    mlp_qat.compile("adam", "sparse_categorical_crossentropy")
    mlp_qat.fit(xm, ym, epochs=2, batch_size=64, verbose=0)

    xc = np.tanh(rng.normal(0, 1, (256, 16, 16, 3))).astype(np.float32)
    yc = (xc[:, :8, :8, 0].mean((1, 2)) > 0).astype(np.int64) + 2 * (xc[:, 8:, 8:, 1].mean((1, 2)) > 0)

    def cnn():
        i = keras.Input((16, 16, 3), name="image")
        x = L.Conv2D(8, 3, padding="same", name="conv1")(i)
        x = L.BatchNormalization(name="bn1")(x)
        x = L.ReLU(name="relu1")(x)
        x = L.Conv2D(16, 3, padding="same", strides=2, name="conv2")(x)
        x = L.BatchNormalization(name="bn2")(x)
        x = L.ReLU(name="relu2")(x)
        x = L.GlobalAveragePooling2D(name="pool")(x)
        return keras.Model(i, L.Dense(4, activation="softmax", name="probs")(x))

    cnn_float = cnn()
    cnn_float.compile("adam", "sparse_categorical_crossentropy")
    cnn_float.fit(xc, yc, epochs=2, batch_size=32, verbose=0)
    cnn_qat = tfmot.quantization.keras.quantize_model(cnn_float)
    cnn_qat.compile("adam", "sparse_categorical_crossentropy")
    cnn_qat.fit(xc, yc, epochs=1, batch_size=32, verbose=0)
    train_s = time.perf_counter() - t0

    np.savez(out / "mlp_inputs.npz", pixels=xm[:64], labels=ym[:64])
    np.savez(out / "cnn_inputs.npz", image=xc[:64], labels=yc[:64])
    models = {"mlp_qat": (mlp_qat, xm), "cnn_qat": (cnn_qat, xc), "cnn_float": (cnn_float, xc)}
    for name, (m, x) in models.items():
        with tfmot.quantization.keras.quantize_scope():
            m.save(out / f"{name}.h5")
            m.save(out / f"{name}.keras")
            m.save(out / f"{name}_sm")
        conv = tf.lite.TFLiteConverter.from_keras_model(m)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        if not name.endswith("_qat"):
            conv.representative_dataset = lambda x=x: ([x[i : i + 1]] for i in range(32))
            conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        (out / f"{name}_int8.tflite").write_bytes(conv.convert())
    total = time.perf_counter() - t0
    (out / "build_seconds.txt").write_text(f"training {train_s:.1f} s, total {total:.1f} s\n")


if __name__ == "__main__":
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    _build(Path(sys.argv[1]))
