"""MobileNetV2-sized float/int8 pair for the benchmarks, built once with the TF converter and cached.

Random weights (`weights=None`), 224x224x3 input; the int8 twin is full-integer with float I/O,
calibrated on smooth random images. Cached in `.fixture-cache/bench-<key>/` keyed by this file and
the TensorFlow version, like the test fixtures.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # tests.helpers

SHAPE = (224, 224, 3)


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import tensorflow as tf

    return tf


def images(n: int, seed: int = 0) -> np.ndarray:
    from tests.helpers.fixture_models import representative_images

    return representative_images(n, seed, SHAPE)


def keras_model():
    tf = _tf()
    tf.keras.utils.set_random_seed(7)
    return tf.keras.applications.MobileNetV2(weights=None, input_shape=SHAPE, classes=1000)


def converter(km, calib: int = 16):
    """An int8 (float I/O) converter of `km`, as QuantizationDebugger wants it."""
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(km)
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    data = images(calib, seed=1)

    def rep():
        for i in range(len(data)):
            yield [data[i : i + 1]]

    conv.representative_dataset = rep
    return conv


def cache_dir() -> Path:
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    d = REPO / ".fixture-cache" / f"bench-{key}"
    d.mkdir(parents=True, exist_ok=True)
    return d


def mobilenet_pair() -> tuple[Path, Path]:
    """(float, int8) MobileNetV2 .tflite paths, built on first use."""
    d = cache_dir()
    f, q = d / "mobilenet_v2_float.tflite", d / "mobilenet_v2_int8.tflite"
    if not (f.exists() and q.exists()):
        tf = _tf()
        km = keras_model()
        fdata = tf.lite.TFLiteConverter.from_keras_model(km).convert()
        qdata = converter(km).convert()
        for p, data in ((f, fdata), (q, qdata)):
            tmp = p.with_suffix(".tmp")
            tmp.write_bytes(data)
            os.replace(tmp, p)
    return f, q


if __name__ == "__main__":
    for p in mobilenet_pair():
        print(p, p.stat().st_size)
