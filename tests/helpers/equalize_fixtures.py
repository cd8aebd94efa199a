"""Converter-built pairs for the `equalize` edit (cross-layer equalization), cached like the others.

`eq_cnn_*`: a Keras CNN with a dense-prediction head (conv1 -> conv2 -> conv3 -> depthwise -> 1x1
conv, whose feature map is the output: a global pool would average the damage away) in
which one output channel of conv2 (weights and bias) is multiplied by K and conv3's matching
input-channel weights divided by K. conv2 ends in ReLU, which is positively homogeneous, so the
float function is unchanged (up to float rounding) while the int8 model, calibrated by the TF
converter on representative images (per-tensor activations, per-channel weights), gives every
other channel of conv2's output a few steps only.
`eq_fc_*`: the same plant between two Dense layers (FULLY_CONNECTED -> FULLY_CONNECTED).
`eq_refuse_*`: a CNN whose conv ends in ReLU6 (not positively homogeneous) and whose next conv
feeds two convs (more than one consumer): both are refused.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models
from tests.helpers.fixture_models import _tf, convert, representative_images

K = 60.0
CHANNEL = 3  # the planted channel
CNN_SHAPE = (24, 24, 3)
FC_FEATURES = 24
EQ_FIXTURES = ("eq_cnn_float", "eq_cnn_int8", "eq_fc_float", "eq_fc_int8", "eq_refuse_float", "eq_refuse_int8")


def _random_biases(model, rng: np.random.Generator) -> None:
    for layer in model.layers:
        ws = layer.get_weights()
        if len(ws) == 2:
            layer.set_weights([ws[0], rng.normal(0, 0.05, ws[1].shape).astype(np.float32)])


def _plant(producer, consumer, depthwise_consumer: bool = False) -> None:
    """Producer channel CHANNEL x K (weights and bias); consumer's input channel CHANNEL / K."""
    w, b = producer.get_weights()
    w[..., CHANNEL] *= K
    b[CHANNEL] *= K
    producer.set_weights([w, b])
    cw, cb = consumer.get_weights()
    if cw.ndim == 4 and not depthwise_consumer:  # Conv2D kernel: H, W, in, out
        cw[:, :, CHANNEL, :] /= K
    else:  # Dense kernel: in, out
        cw[CHANNEL, :] /= K
    consumer.set_weights([cw, cb])


def keras_eq_cnn(planted: bool = True):
    tf = _tf()
    tf.keras.utils.set_random_seed(21)
    L = tf.keras.layers
    inp = L.Input(CNN_SHAPE, name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="conv1")(inp)
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv2")(x)
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv3")(x)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dw")(x)
    out = L.Conv2D(8, 1, name="conv4")(x)
    km = tf.keras.Model(inp, out, name="eqcnn")
    _random_biases(km, np.random.default_rng(5))
    if planted:
        _plant(km.get_layer("conv2"), km.get_layer("conv3"))
    return km


def fc_vectors(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.tanh(rng.normal(0, 1, (n, FC_FEATURES))).astype(np.float32)


def keras_eq_fc(planted: bool = True):
    tf = _tf()
    tf.keras.utils.set_random_seed(22)
    L = tf.keras.layers
    inp = L.Input((FC_FEATURES,), name="features")
    x = L.Dense(32, activation="relu", name="fc1")(inp)
    x = L.Dense(32, activation="relu", name="fc2")(x)
    x = L.Dense(32, activation="relu", name="fc3")(x)
    out = L.Dense(8, name="head")(x)
    km = tf.keras.Model(inp, out, name="eqfc")
    _random_biases(km, np.random.default_rng(6))
    if planted:
        _plant(km.get_layer("fc2"), km.get_layer("fc3"))
    return km


def keras_eq_refuse():
    tf = _tf()
    tf.keras.utils.set_random_seed(23)
    L = tf.keras.layers
    inp = L.Input(CNN_SHAPE, name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu6", name="conv_relu6")(inp)
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="conv_fork")(x)
    a = L.Conv2D(8, 1, name="branch_a")(x)
    b = L.Conv2D(8, 1, name="branch_b")(x)
    x = L.Add(name="join")([a, b])
    x = L.GlobalAveragePooling2D(name="pool")(x)
    out = L.Dense(4, name="head")(x)
    return tf.keras.Model(inp, out, name="eqrefuse")


def _images_rep(n: int, seed: int):
    data = representative_images(n, seed, CNN_SHAPE)
    return lambda: ([data[i : i + 1]] for i in range(n))


def _fc_rep(n: int, seed: int):
    data = fc_vectors(n, seed)
    return lambda: ([data[i : i + 1]] for i in range(n))


def _build_all() -> dict[str, bytes]:
    cnn, fc, refuse = keras_eq_cnn(), keras_eq_fc(), keras_eq_refuse()
    return {
        "eq_cnn_float": convert(cnn, "float"),
        "eq_cnn_int8": convert(cnn, "int8", _images_rep(32, 0)),
        "eq_fc_float": convert(fc, "float"),
        "eq_fc_int8": convert(fc, "int8", _fc_rep(64, 0)),
        "eq_refuse_float": convert(refuse, "float"),
        "eq_refuse_int8": convert(refuse, "int8", _images_rep(16, 0)),
    }


def cache_paths(root: Path) -> dict[str, Path]:
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"equalize-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_models({n: folder / f"{n}.tflite" for n in EQ_FIXTURES}, _build_all)


def samples_npz(root: Path, kind: str, n: int, seed: int) -> Path:
    """Samples as an .npz (one array): representative images ("cnn") or vectors ("fc")."""
    p = root / f"eq_{kind}_{n}_{seed}.npz"
    if not p.exists():
        data = representative_images(n, seed, CNN_SHAPE) if kind == "cnn" else fc_vectors(n, seed)
        tmp = root / f"eq_{kind}_{n}_{seed}.{os.getpid()}.tmp.npz"
        np.savez(tmp, data)
        os.replace(tmp, p)
    return p
