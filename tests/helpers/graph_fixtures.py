"""Deep transformer stacks for the graph view, built at test time by the TF converter and cached
(own folder, keyed by this file's hash): `deep_transformer(root, blocks, mode)`.

The same pre-norm block as `transformer_fixtures` (layer norm, multi-head attention, GELU
feed-forward, residual adds) at d_model 32, repeated `blocks` times: 8 blocks give ~370 float
ops (the layout test), 32 blocks ~1,500 int8 ops (the large-model screenshots and timing).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf

VOCAB, D_MODEL, SEQ, HEADS = 64, 32, 8, 2


def keras_deep_transformer(blocks: int, seed: int = 7):
    tf = _tf()
    tf.keras.utils.set_random_seed(seed)
    L = tf.keras.layers
    inp = L.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
    x = L.Embedding(VOCAB, D_MODEL, name="embed")(inp)
    for b in range(blocks):
        h = L.LayerNormalization(name=f"ln{b}a")(x)
        a = L.MultiHeadAttention(num_heads=HEADS, key_dim=D_MODEL // HEADS, name=f"attn{b}")(h, h)
        x = L.Add(name=f"res{b}a")([x, a])
        h = L.LayerNormalization(name=f"ln{b}b")(x)
        h = L.Dense(2 * D_MODEL, activation="gelu", name=f"ff{b}a")(h)
        h = L.Dense(D_MODEL, name=f"ff{b}b")(h)
        x = L.Add(name=f"res{b}b")([x, h])
    out = L.Dense(VOCAB, name="logits")(L.LayerNormalization(name="ln_final")(x))
    return tf.keras.Model(inp, out, name=f"transformer{blocks}")


def _convert(blocks: int, mode: str) -> bytes:
    import numpy as np

    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(keras_deep_transformer(blocks))
    if mode == "int8":
        data = np.random.default_rng(1).integers(0, VOCAB, (16, 1, SEQ)).astype(np.int32)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([data[i]] for i in range(len(data)))
    return conv.convert()


def deep_transformer(root: Path, blocks: int, mode: str = "float") -> Path:
    """The `blocks`-deep transformer (`mode` float or int8) under `root`, built on first use."""
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    return cached_model(root / f"graph-deep-{key}" / f"transformer{blocks}_{mode}.tflite", lambda: _convert(blocks, mode))
