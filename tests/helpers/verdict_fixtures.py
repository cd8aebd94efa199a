"""Small models for the verdict tests (issue 26 §6-§8): a correct int8 export whose SOFTMAX
output "clips" past its fixed grid, and 16x8 exports of the fixed-output ops and MEAN.

`confident_*`: features [16] -> Dense(32, relu) "fc1" -> Dense(4) "logits" -> Softmax "probs",
weights drawn at a seed and the logits scaled so most samples are decided with a probability
above 255.5/256: the int8 SOFTMAX output (scale 1/256, zero point -128, fixed by the kernel)
then saturates on a few percent of its values although nothing is wrong with the export.
`int16_ops`: features [16] -> Dense(8) -> LOGISTIC, TANH, Softmax, MEAN branches, converted by
the TF converter in 16x8 mode (int16 activations), to see which int16 kernels LiteRT runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models

FEATURES = 16


def inputs(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 1, (n, FEATURES)).astype(np.float32)


def _rep():
    data = inputs(64, 0)

    def gen():
        for i in range(len(data)):
            yield [data[i : i + 1]]

    return gen


def _confident() -> dict[str, bytes]:
    from tests.helpers.fixture_models import _tf, convert

    tf = _tf()
    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    inp = L.Input((FEATURES,), name="features")
    x = L.Dense(32, activation="relu", name="fc1")(inp)
    x = L.Dense(4, name="logits")(x)
    out = L.Softmax(name="probs")(x)
    km = tf.keras.Model(inp, out)
    w, b = km.get_layer("logits").get_weights()
    km.get_layer("logits").set_weights([w * 6.0, b])
    return {"conf_float": convert(km, "float", _rep()), "conf_int8": convert(km, "int8", _rep())}


def _int16_ops() -> dict[str, bytes]:
    from tests.helpers.fixture_models import _tf, convert

    tf = _tf()
    tf.keras.utils.set_random_seed(6)
    L = tf.keras.layers
    inp = L.Input((FEATURES,), name="features")
    h = L.Dense(8, name="fc")(inp)
    outs = [
        L.Activation("sigmoid", name="sig")(h),
        L.Activation("tanh", name="tanh")(h),
        L.Softmax(name="soft")(h),
        L.Reshape((8,), name="mean_out")(L.GlobalAveragePooling1D(name="mean")(L.Reshape((2, 8))(L.Concatenate()([h, h])))),
    ]
    km = tf.keras.Model(inp, outs)
    return {"ops_float": convert(km, "float", _rep()), "ops_a16w8": convert(km, "a16w8", _rep()),
            "ops_int8": convert(km, "int8", _rep())}  # fmt: skip


def _folder(root: Path) -> Path:
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return root / f"verdicts-{key}"


def confident(root: Path) -> dict[str, Path]:
    d = _folder(root)
    return cached_models({k: d / f"{k}.tflite" for k in ("conf_float", "conf_int8")}, _confident)


def int16_ops(root: Path) -> dict[str, Path]:
    d = _folder(root)
    return cached_models({k: d / f"{k}.tflite" for k in ("ops_float", "ops_a16w8", "ops_int8")}, _int16_ops)
