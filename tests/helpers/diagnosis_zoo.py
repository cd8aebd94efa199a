"""Model families the diagnosis must name the root cause of, trained at build time on scikit-learn's
`load_digits` (1,797 8x8 images shipped inside the package), upsampled to 16x16.

Each image comes with a brightness gain in GAIN (a camera's exposure), training and held-out alike.

- `intin`: a small CNN converted with int8 inputs and outputs (`inference_input_type=tf.int8`),
  calibrated on images whose gain stays below CALIBRATION_GAIN: about 9 % of the real input
  values lie beyond the int8 input's range (the planted cause, at the model input, which an
  integer-input model holds itself: no QUANTIZE op).
- `dw2` / `dw3`: depthwise-separable CNNs (conv -> 3 x [depthwise 3x3, ReLU -> 1x1 conv, ReLU] ->
  flatten -> dense -> softmax; trained EPOCHS epochs on images shifted by up to a pixel, cosine
  learning rate: float ~98 % held out; the average-pooled head of the ReLU6 family reached 93.5-96 %)
  whose depthwise output channels are scaled after training by factors spread over 2 or 3
  decades, each 1x1 consumer's input weights multiplied back (ReLU is positively homogeneous:
  the float function is unchanged), converted with per-tensor weights
  (`_experimental_disable_per_channel`): the small depthwise channels keep a step or two (Nagel et
  al. 2019, "Data-Free Quantization"). `healthy`: the same network unplanted, per-channel weights.

`held_out()` is the labelled .npz of images none of them trained on (key `image`, `labels`).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models

ZOO = ("intin_float", "intin_int8", "dw2_float", "dw2_int8", "dw3_float", "dw3_int8", "healthy_float", "healthy_int8")
SEED = 5
HELD_OUT = 300
SIZE = 16
GAIN = (0.8, 1.6)
EPOCHS, LR = 30, 2e-3  # the separable twins' training (`_fit_shifted`): held-out float accuracy >= 97 %
CALIBRATION_GAIN = 1.15  # the int8-input twin's calibration images: gains up to this (the real ones reach GAIN[1])


def digits() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(train images, labels, held-out images, labels), 16x16x1 in [0, 1]."""
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)
    x = np.kron(x, np.ones((1, 2, 2), np.float32))[..., None]  # 8x8 -> 16x16, nearest
    rng = np.random.default_rng(SEED)
    x = x * rng.uniform(*GAIN, size=(len(x), 1, 1, 1)).astype(np.float32)
    y = d.target.astype(np.int64)
    order = rng.permutation(len(x))
    held, train = order[:HELD_OUT], order[HELD_OUT:]
    return x[train], y[train], x[held], y[held]


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    tf.keras.utils.set_random_seed(SEED)
    return tf


def _separable(tf, act: str = "relu", head: str = "gap", init: str = "glorot_uniform"):
    """`head`: "gap" (global average) or "flat" (flatten: keeps where the strokes are, which the
    average loses); `init`: the convolutions' initializer."""
    L = tf.keras.layers
    inp = L.Input((SIZE, SIZE, 1), batch_size=1, name="image")
    x = L.Conv2D(16, 3, padding="same", activation=act, name="stem", kernel_initializer=init)(inp)
    for k, width in enumerate((16, 24, 32)):
        x = L.DepthwiseConv2D(3, strides=2 if k else 1, padding="same", activation=act, name=f"dw{k}",
                              depthwise_initializer=init)(x)  # fmt: skip
        x = L.Conv2D(width, 1, activation=act, name=f"pw{k}", kernel_initializer=init)(x)
    x = L.GlobalAveragePooling2D(name="gap")(x) if head == "gap" else L.Flatten(name="flat")(x)
    x = L.Dense(10, name="logits")(x)
    return tf.keras.Model(inp, L.Softmax(name="probs")(x))


def _small_cnn(tf):
    L = tf.keras.layers
    inp = L.Input((SIZE, SIZE, 1), batch_size=1, name="image")
    x = L.Conv2D(12, 3, padding="same", activation="relu", name="conv1")(inp)
    x = L.Conv2D(24, 3, strides=2, padding="same", activation="relu", name="conv2")(x)
    x = L.Conv2D(32, 3, strides=2, padding="same", activation="relu", name="conv3")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    x = L.Dense(10, name="logits")(x)
    return tf.keras.Model(inp, L.Softmax(name="probs")(x))


def _fit(km, x, y, epochs: int) -> None:
    import tensorflow as tf

    km.compile(tf.keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy")
    km.fit(x, y, epochs=epochs, batch_size=32, verbose=0)


def _fit_shifted(km, x, y, epochs: int, lr: float = LR) -> None:
    """Adam on a cosine-decaying learning rate, each epoch on the images shifted by up to one pixel
    (a fixed random shift per image and epoch): the small digits set generalizes better."""
    import tensorflow as tf

    steps = epochs * int(np.ceil(len(x) / 32))
    km.compile(tf.keras.optimizers.Adam(tf.keras.optimizers.schedules.CosineDecay(lr, steps, alpha=0.02)),
               "sparse_categorical_crossentropy")  # fmt: skip
    rng = np.random.default_rng(SEED)
    for _ in range(epochs):
        shifts = rng.integers(-1, 2, size=(len(x), 2))
        moved = np.stack([np.roll(img, tuple(d), axis=(0, 1)) for img, d in zip(x, shifts, strict=True)])
        km.fit(moved, y, epochs=1, batch_size=32, verbose=0)


def spread(channels: int, decades: float) -> np.ndarray:
    """Per-channel factors from 1 down to 10**-decades (a fixed shuffle)."""
    f = 10.0 ** (-decades * np.linspace(0.0, 1.0, channels))
    return f[np.random.default_rng(channels).permutation(channels)].astype(np.float32)


def plant_spread(km, decades: float) -> None:
    """Scale each depthwise output channel i by f_i and its 1x1 consumer's input weights by 1/f_i."""
    for k in range(3):
        dw, pw = km.get_layer(f"dw{k}"), km.get_layer(f"pw{k}")
        wd, bd = dw.get_weights()
        f = spread(wd.shape[2], decades)
        wd = wd * f[None, None, :, None]
        bd = bd * f
        dw.set_weights([wd, bd])
        wp, bp = pw.get_weights()
        pw.set_weights([wp / f[None, None, :, None], bp])


def _build() -> dict[str, bytes]:
    tf = _tf()
    from tests.helpers.fixture_models import convert

    xt, yt, _, _ = digits()
    rng = np.random.default_rng(SEED)
    cal = xt[rng.choice(len(xt), 64, replace=False)]

    def rep(data):
        return lambda: ([data[i : i + 1]] for i in range(len(data)))

    out: dict[str, bytes] = {}
    cnn = _small_cnn(tf)
    _fit(cnn, xt, yt, 6)
    out["intin_float"] = convert(cnn, "float")
    gains = rng.uniform(GAIN[0], CALIBRATION_GAIN, size=(len(cal), 1, 1, 1)).astype(np.float32)
    dim = cal / np.maximum(cal.max(axis=(1, 2, 3), keepdims=True), 1e-6) * gains  # brightest pixel = its gain
    out["intin_int8"] = convert(cnn, "int8_io", rep(dim))
    sep = _separable(tf, head="flat", init="he_normal")
    _fit_shifted(sep, xt, yt, EPOCHS)
    base = sep.get_weights()
    out["healthy_float"] = convert(sep, "float")
    out["healthy_int8"] = convert(sep, "int8", rep(cal))
    for d in (2, 3):
        sep.set_weights(base)
        plant_spread(sep, float(d))
        out[f"dw{d}_float"] = convert(sep, "float")
        out[f"dw{d}_int8"] = convert(sep, "int8_per_tensor", rep(cal))
    return out


def models(root: Path) -> dict[str, Path]:
    import tensorflow as tf

    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"zoo-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_models({n: folder / f"{n}.tflite" for n in ZOO}, _build)


def held_out(root: Path) -> Path:
    """The held-out labelled digits as .npz (`image`, `labels`)."""
    p = root / f"zoo_digits_{SIZE}_{HELD_OUT}_{SEED}_{GAIN[0]}_{GAIN[1]}.npz"
    if not p.exists():
        _, _, xh, yh = digits()
        tmp = root / f"zoo_digits.{os.getpid()}.tmp.npz"
        np.savez(tmp, image=xh, labels=yh)
        os.replace(tmp, p)
    return p
