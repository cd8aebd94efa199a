"""Converter-built models whose ops compute shapes (SHAPE/GATHER/REDUCE_PROD/PACK feeding RESHAPE),
as Keras emits for a Dense on a 3-D input, and their int8 twins (TF converter, full integer,
float I/O). Cached like fixture_models (own folder, keyed by this file and the TF version).

- `dense3d`: [12, 16] -> layer norm -> Dense(32, relu) -> Dense(16): each Dense on a 3-D input
  becomes RESHAPE to 2-D (its shape computed from the input's) -> FULLY_CONNECTED -> RESHAPE back;
  the float file records [1, 1] for the 2-D tensor, which the shapes replace at run time;
- `block`: a transformer block on [16, 32] float tokens (layer norm, 2-head attention, residual,
  layer norm, GELU MLP of two Dense on 3-D inputs, residual), batch dimension left free.

Random samples in [-1, 1] fit both (`samples`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf

SHAPE_OP_FIXTURES = ("dense3d_float", "dense3d_int8", "block_float", "block_int8")
INPUT_SHAPES = {"dense3d": (12, 16), "block": (16, 32)}


def samples(kind: str, n: int, seed: int = 0) -> np.ndarray:
    """n samples of model `kind`, each with its batch dimension: (n, 1, ...), float32."""
    return np.random.default_rng(seed).uniform(-1, 1, (n, 1, *INPUT_SHAPES[kind])).astype(np.float32)


def _keras(tf, kind: str):
    tf.keras.utils.set_random_seed(3)
    L = tf.keras.layers
    inp = L.Input(INPUT_SHAPES[kind], name="tokens")
    if kind == "dense3d":
        x = L.LayerNormalization(name="ln")(inp)
        x = L.Dense(32, activation="relu", name="fc1")(x)
        return tf.keras.Model(inp, L.Dense(16, name="fc2")(x))
    h = L.LayerNormalization(name="ln1")(inp)
    x = L.Add(name="res1")([inp, L.MultiHeadAttention(num_heads=2, key_dim=16, name="attn")(h, h)])
    h = L.Dense(64, activation="gelu", name="ff1")(L.LayerNormalization(name="ln2")(x))
    return tf.keras.Model(inp, L.Add(name="res2")([x, L.Dense(32, name="ff2")(h)]))


def build(name: str) -> bytes:
    tf = _tf()
    kind, _, mode = name.partition("_")
    conv = tf.lite.TFLiteConverter.from_keras_model(_keras(tf, kind))
    if mode == "int8":
        data = samples(kind, 32, seed=1)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([x] for x in data)
    return conv.convert()


def cache_path(root: Path, name: str) -> Path:
    if name not in SHAPE_OP_FIXTURES:
        raise KeyError(name)
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"shape-ops-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_model(folder / f"{name}.tflite", lambda: build(name))
