"""A small conv net with an op of two outputs (SPLIT), float and int8 (TF converter, full
integer, float I/O), cached like fixture_models (own folder keyed by this file and TF's version):
conv -> split in two along the channels -> a conv on each half -> concatenate -> pool -> dense.
A comparison of the pair has two layers for the SPLIT op (one per output).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers.cache import cached_models
from tests.helpers.fixture_models import _tf, convert, representative_images

SHAPE = (16, 16, 3)
NAMES = ("split_float", "split_int8")


def _build() -> dict[str, bytes]:
    tf = _tf()
    L = tf.keras.layers
    tf.keras.utils.set_random_seed(4)

    def rep():
        for x in representative_images(16, seed=6, shape=SHAPE):
            yield [x[None]]

    inp = L.Input(SHAPE, name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="stem")(inp)
    a, b = L.Lambda(lambda t: tf.split(t, 2, axis=-1), name="halves")(x)
    a = L.Conv2D(4, 3, padding="same", activation="relu", name="left")(a)
    b = L.Conv2D(4, 3, padding="same", activation="relu", name="right")(b)
    x = L.GlobalAveragePooling2D(name="gap")(L.Concatenate(name="join")([a, b]))
    model = tf.keras.Model(inp, L.Dense(4, name="logits")(x))
    return {"split_float": convert(model, "float", rep), "split_int8": convert(model, "int8", rep)}


def split_models(root: Path) -> dict[str, Path]:
    key = hashlib.sha256(Path(__file__).read_bytes() + _tf().__version__.encode()).hexdigest()[:12]
    folder = root / f"split-{key}"
    return cached_models({n: folder / f"{n}.tflite" for n in NAMES}, _build)
