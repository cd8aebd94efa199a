"""Converter-built pairs for the surgical-edit tests and benchmark, cached like fixture_models.

`mnv2_float` / `mnv2_int8`: tf.keras.applications.MobileNetV2 at 160x160 (alpha 0.5, 100
classes, weights=None: random weights, built at test time), int8 by the TF converter with a
representative dataset of smooth random images (float input/output, per-channel weights);
`mnv2_int8_per_tensor`: the same with per-tensor weights (where bias correction is the textbook
remedy: a per-tensor depthwise weight rounds with a per-channel mean error).
Each batch-norm layer's moving statistics are set to the batch statistics of its input on
those images (in order), as training would leave them; with the initial statistics (mean 0,
variance 1) the random network's activations shrink layer by layer to nothing.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models
from tests.helpers.fixture_models import _rep_dataset, _tf, convert, representative_images

MNV2_SHAPE = (160, 160, 3)
SURGICAL_FIXTURES = ("mnv2_float", "mnv2_int8", "mnv2_int8_per_tensor")


def keras_mnv2():
    tf = _tf()
    tf.keras.utils.set_random_seed(11)
    km = tf.keras.applications.MobileNetV2(input_shape=MNV2_SHAPE, alpha=0.5, weights=None, classes=100)
    x = mnv2_images(16, 0)
    for layer in km.layers:
        if isinstance(layer, tf.keras.layers.BatchNormalization):
            h = tf.keras.Model(km.input, layer.input)(x, training=False).numpy()
            gamma, beta, _, _ = layer.get_weights()
            axes = tuple(range(h.ndim - 1))
            layer.set_weights([gamma, beta, h.mean(axis=axes), h.var(axis=axes) + 1e-3])
    return km


def mnv2_images(n: int, seed: int) -> np.ndarray:
    return representative_images(n, seed, MNV2_SHAPE)


def _build_all() -> dict[str, bytes]:
    km = keras_mnv2()
    return {
        "mnv2_float": convert(km, "float"),
        "mnv2_int8": convert(km, "int8", _rep_dataset(16, 0, MNV2_SHAPE)),
        "mnv2_int8_per_tensor": convert(km, "int8_per_tensor", _rep_dataset(16, 0, MNV2_SHAPE)),
    }


def cache_paths(root: Path) -> dict[str, Path]:
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"surgical-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_models({n: folder / f"{n}.tflite" for n in SURGICAL_FIXTURES}, _build_all)


def npz(root: Path, name: str, n: int, seed: int) -> Path:
    """Samples for the MobileNetV2 pair as an .npz (key `input_1`-agnostic: one array)."""
    p = root / f"mnv2_{name}_{n}_{seed}.npz"
    if not p.exists():
        tmp = root / f"mnv2_{name}_{n}_{seed}.tmp.npz"
        np.savez(tmp, mnv2_images(n, seed))
        os.replace(tmp, p)
    return p
