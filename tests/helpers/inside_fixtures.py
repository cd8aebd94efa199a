"""Models whose damage hides inside a tensor (issue 25), built with the TF converter at test time.

`det_float` / `det_int8` / `det_int8_io`: a detector-style head. Two strided convolutions give an
8x8 grid of 64 cells; per cell a sigmoid 1x1 conv (4) scaled by 640 gives box coordinates in
pixels (0..640) and a sigmoid 1x1 conv (3) gives class scores (0..1); the two are concatenated on the last
axis into one (1, 64, 7) output. In int8 the concatenation has one scale (about 2.5 px per step),
so every score lands on 0 or 1 step. `det_int8` has float outputs (the concatenation is read by a
DEQUANTIZE that is the graph output), `det_int8_io` int8 outputs.

`out_float` / `out_int8`: a trained classifier (conv1 -> P -> C -> pooling -> dense -> softmax)
in which P's output channel 0 is multiplied by OUTLIER_K and C's weights for input channel 0 are
divided by it: the float function is unchanged (P's ReLU is positively homogeneous), but P's
per-tensor int8 activation scale is now set by one channel and the others keep a few steps each.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models

DETECTOR_FIXTURES = ("det_float", "det_int8", "det_int8_io")
OUTLIER_FIXTURES = ("out_float", "out_int8")
OUTLIER_K = 60.0
PIXELS = 640.0
BOXES, CLASSES = 4, 3


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    return tf


def _detector() -> dict[str, bytes]:
    tf = _tf()
    from tests.helpers.fixture_models import _rep_dataset, convert

    tf.keras.utils.set_random_seed(25)
    L = tf.keras.layers
    inp = L.Input((32, 32, 3), name="image")
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="stem")(inp)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="neck")(x)
    box = L.Conv2D(BOXES, 1, activation="sigmoid", name="box_raw")(x)
    box = L.Rescaling(PIXELS, name="box_px")(box)
    score = L.Conv2D(CLASSES, 1, activation="sigmoid", name="scores")(x)
    box, score = L.Reshape((64, BOXES), name="box_cells")(box), L.Reshape((64, CLASSES), name="score_cells")(score)
    out = L.Concatenate(axis=-1, name="head")([box, score])
    km = tf.keras.Model(inp, out, name="detector")
    rep = _rep_dataset(64, seed=7)
    return {"det_float": convert(km, "float"), "det_int8": convert(km, "int8", rep), "det_int8_io": convert(km, "int8_io", rep)}


def _outlier() -> dict[str, bytes]:
    tf = _tf()
    from tests.helpers.fixture_models import convert
    from tests.helpers.task_fixtures import SIZE, make_dataset

    tf.keras.utils.set_random_seed(26)
    L = tf.keras.layers
    inp = L.Input((SIZE, SIZE, 3), name="image")
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="conv1")(inp)
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="producer")(x)
    x = L.Conv2D(16, 1, activation="relu", name="consumer")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    x = L.Dense(4, name="logits")(x)
    out = L.Softmax(name="probs")(x)
    km = tf.keras.Model(inp, out)
    km.compile(optimizer=tf.keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy")
    xt, yt = make_dataset(800, seed=1)
    km.fit(xt, yt, epochs=4, batch_size=32, verbose=0)
    wp, bp = km.get_layer("producer").get_weights()
    wp[..., 0] *= OUTLIER_K
    bp[0] *= OUTLIER_K
    km.get_layer("producer").set_weights([wp, bp])
    wc, bc = km.get_layer("consumer").get_weights()
    wc[:, :, 0, :] /= OUTLIER_K
    km.get_layer("consumer").set_weights([wc, bc])
    xc, _ = make_dataset(64, seed=2)

    def rep():
        for i in range(len(xc)):
            yield [xc[i : i + 1]]

    return {"out_float": convert(km, "float"), "out_int8": convert(km, "int8", rep)}


def _folder(root: Path, kind: str) -> Path:
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    folder = root / f"inside-{kind}-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def detector_models(root: Path) -> dict[str, Path]:
    folder = _folder(root, "detector")
    return cached_models({n: folder / f"{n}.tflite" for n in DETECTOR_FIXTURES}, _detector)


def outlier_models(root: Path) -> dict[str, Path]:
    folder = _folder(root, "outlier")
    return cached_models({n: folder / f"{n}.tflite" for n in OUTLIER_FIXTURES}, _outlier)


def detector_images(n: int = 16, seed: int = 3) -> np.ndarray:
    from tests.helpers.fixture_models import representative_images

    return representative_images(n, seed)
