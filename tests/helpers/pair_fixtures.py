"""Two models of the same architecture trained from different seeds: same topology and tensor
names, different weights. One is quantized, so `compare` sees a pair that is not twins."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from tests.helpers.cache import cached_models


def _train(seed: int):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from tests.helpers.task_fixtures import CLASSES, SIZE, make_dataset

    tf.keras.utils.set_random_seed(seed)
    L = tf.keras.layers
    inp = L.Input((SIZE, SIZE, 3), name="image")
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="conv1")(inp)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dw1")(x)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="conv2")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    x = L.Dense(len(CLASSES), name="logits")(x)
    out = L.Softmax(name="probs")(x)
    km = tf.keras.Model(inp, out)
    km.compile(optimizer=tf.keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy")
    xt, yt = make_dataset(400, seed=seed)
    km.fit(xt, yt, epochs=2, batch_size=32, verbose=0)
    return km


def _build() -> dict[str, bytes]:
    from tests.helpers.fixture_models import convert
    from tests.helpers.task_fixtures import make_dataset

    xc, _ = make_dataset(32, seed=2)

    def rep():
        for i in range(len(xc)):
            yield [xc[i : i + 1]]

    first, second = _train(21), _train(22)
    return {
        "seed21_float": convert(first, "float"),
        "seed21_int8": convert(first, "int8", rep),
        "seed22_int8": convert(second, "int8", rep),
    }


class PairFixtures:
    NAMES = ("seed21_float", "seed21_int8", "seed22_int8")

    def __init__(self, root: Path) -> None:
        key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
        self.dir = root / f"pair-{key}"
        self.dir.mkdir(parents=True, exist_ok=True)

    def models(self) -> dict[str, Path]:
        return cached_models({n: self.dir / f"{n}.tflite" for n in self.NAMES}, _build)
