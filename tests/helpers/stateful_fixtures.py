"""A stateful model for issue 34: a tf_keras LSTM classifier, which TF's converter fuses into
UNIDIRECTIONAL_SEQUENCE_LSTM with its hidden and cell state in variable tensors (they persist
across invoke()). Built at test time in a subprocess (tf-keras needs TF_USE_LEGACY_KERAS=1 before
TensorFlow's import) and cached in `.fixture-cache/stateful_<key>/`:

- lstm_float.tflite, lstm_int8.tflite (int8, calibrated on a representative dataset);
- lstm_inputs.npz: `seq` (N, T, F) sequences and `labels` (which of three frequencies);
- counter.tflite: a resource variable (VAR_HANDLE / READ_VARIABLE / ASSIGN_VARIABLE, initial value
  assigned by the init subgraph CALL_ONCE runs): v <- v / 2 + x, output 2 v (1, 4 floats).

    python -m tests.helpers.stateful_fixtures OUT_DIR      # builds into OUT_DIR
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tests.helpers.cache import keras_built_folder

STEPS, FEATURES, CLASSES = 16, 3, 3


def stateful_fixture_dir(root: Path) -> Path:
    """The folder of the LSTM fixture, built (about 30 s) when missing."""
    return keras_built_folder(root, "stateful", "tests.helpers.stateful_fixtures", __file__)


def sequences(n: int, seed: int):
    """Noisy sines whose frequency is the class, at a random phase and amplitude."""
    import numpy as np

    rng = np.random.default_rng(seed)
    y = rng.integers(0, CLASSES, n)
    t = np.arange(STEPS)[None, :, None]
    freq = (0.4 + 0.5 * y)[:, None, None]
    amp = rng.uniform(0.5, 2.0, (n, 1, 1))
    x = amp * np.sin(freq * t + rng.uniform(0, 2 * np.pi, (n, 1, 1))) * np.ones((1, 1, FEATURES))
    x = x + rng.normal(0, 0.2, (n, STEPS, FEATURES))
    return x.astype(np.float32), y.astype(np.int64)


def _build(out: Path) -> None:
    import numpy as np
    import tensorflow as tf
    import tf_keras as keras

    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    keras.utils.set_random_seed(0)
    tf.config.experimental.enable_op_determinism()
    L = keras.layers
    x, y = sequences(1500, 0)
    lstm, head = L.LSTM(24, name="lstm"), L.Dense(CLASSES, activation="softmax", name="probs")
    train = keras.Model(i := keras.Input((STEPS, FEATURES), name="seq"), head(lstm(i)))
    train.compile(keras.optimizers.Adam(0.01), "sparse_categorical_crossentropy")
    train.fit(x, y, epochs=12, batch_size=32, verbose=0)
    model = keras.Model(j := keras.Input((STEPS, FEATURES), batch_size=1, name="seq"), head(lstm(j)))  # batch 1: fused

    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    (out / "lstm_float.tflite").write_bytes(conv.convert())
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    conv.representative_dataset = lambda: ([x[k : k + 1]] for k in range(100))
    conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    (out / "lstm_int8.tflite").write_bytes(conv.convert())
    xt, yt = sequences(80, 1)
    np.savez(out / "lstm_inputs.npz", seq=xt, labels=yt)

    class Counter(tf.Module):
        def __init__(self) -> None:
            self.v = tf.Variable(tf.zeros([1, 4]))

        @tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32, name="x")])
        def __call__(self, x):
            self.v.assign(self.v * 0.5 + x)
            return self.v * 2.0

    counter = Counter()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([counter.__call__.get_concrete_function()], counter)
    conv.experimental_enable_resource_variables = True
    (out / "counter.tflite").write_bytes(conv.convert())
    (out / "build_seconds.txt").write_text(f"total {time.perf_counter() - t0:.1f} s\n")


if __name__ == "__main__":
    os.environ["TF_USE_LEGACY_KERAS"] = "1"
    _build(Path(sys.argv[1]))
