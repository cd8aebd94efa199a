"""Converter-built models for the requantize tests, cached like fixture_models (own folder).

`fcn`: a small fully convolutional net with a residual add and a concatenation whose last op
is a 1x1 conv (the model output, no softmax). Keeping that conv float removes the output's
int8 rounding, so the output error must drop: a clean, deterministic improvement to test.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf, convert

REQUANT_FIXTURES = ("fcn",)


def keras_fcn(seed: int = 7):
    tf = _tf()
    tf.keras.utils.set_random_seed(seed)
    L = tf.keras.layers
    inp = L.Input((16, 16, 3), name="image")
    a = L.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inp)
    b = L.Conv2D(8, 1, name="proj")(a)
    x = L.Add(name="res")([a, b])
    c = L.Conv2D(8, 3, padding="same", activation="relu", name="side")(x)
    x = L.Concatenate(name="cat")([x, c])
    out = L.Conv2D(4, 1, name="head")(x)
    return tf.keras.Model(inp, out, name="fcn")


def build(name: str) -> bytes:
    if name == "fcn":
        return convert(keras_fcn(), "float")
    raise KeyError(name)


def cache_path(root: Path, name: str) -> Path:
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"requant-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_model(folder / f"{name}.tflite", lambda: build(name))
