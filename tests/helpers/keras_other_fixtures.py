"""A second, independent training of the QAT MLP of `keras_fixtures` (the same architecture,
Input 784 -> Dense 256 relu -> Dense 128 relu -> Dense 10 softmax, `quantize_model`, another
seed and other synthetic data): with the first one's int8 export it makes an unrelated pair
(issue 26). Built at test time in a subprocess (tf-keras needs TF_USE_LEGACY_KERAS=1 before
TensorFlow is imported) and cached in `.fixture-cache/keras_other_<key>/`.

- other_qat.h5 (and other_qat_sm, a SavedModel folder), other_qat_int8.tflite (the TF
  converter's export from its own QAT ranges).

    python -m tests.helpers.keras_other_fixtures OUT_DIR      # builds into OUT_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.helpers.cache import keras_built_folder


def keras_other_dir(root: Path) -> Path:
    """The folder of the second training, built (about 15 s) when missing."""
    return keras_built_folder(root, "keras_other", "tests.helpers.keras_other_fixtures", __file__)


def _build(out: Path) -> None:
    import numpy as np
    import tensorflow as tf
    import tensorflow_model_optimization as tfmot
    import tf_keras as keras

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    rng = np.random.default_rng(1)
    keras.utils.set_random_seed(1)
    tf.config.experimental.enable_op_determinism()
    L = keras.layers
    x = rng.normal(0, 1, (512, 784)).astype(np.float32)
    y = x[:, :10].argmax(1)
    inp = keras.Input((784,), name="pixels")
    h = L.Dense(256, activation="relu", name="dense_1")(inp)
    h = L.Dense(128, activation="relu", name="dense_2")(h)
    mlp = keras.Model(inp, L.Dense(10, activation="softmax", name="probs")(h))
    qat = tfmot.quantization.keras.quantize_model(mlp)
    qat.compile("adam", "sparse_categorical_crossentropy")
    qat.fit(x, y, epochs=2, batch_size=64, verbose=0)
    with tfmot.quantization.keras.quantize_scope():
        qat.save(out / "other_qat.h5")
        qat.save(out / "other_qat_sm")
    conv = tf.lite.TFLiteConverter.from_keras_model(qat)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    (out / "other_qat_int8.tflite").write_bytes(conv.convert())
    (out / "build_seconds.txt").write_text(f"total {time.perf_counter() - t0:.1f} s\n")


if __name__ == "__main__":
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    _build(Path(sys.argv[1]))
