"""Small transformer fixtures built at test time, cached like fixture_models (own folder).

One pre-norm transformer: token embedding lookup (GATHER), layer norm, multi-head attention
(FULLY_CONNECTED projections, BATCH_MATMUL), GELU feed-forward, residual adds, a logits layer.
Vocab 64, d_model 64, 2 blocks, sequence 16, batch 1: a few hundred KB, built in seconds.

Versions: `float`; `int8` (TF converter, full integer, float I/O); `dynamic` (TF converter,
dynamic range); `int4_b32` (litert-quantizer BLOCKWISE_32 int4 weights, dynamic activations);
`int4_channel` and `int2_channel` (litert-quantizer per-channel int4 / int2 weights).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf

VOCAB, D_MODEL, SEQ, HEADS, BLOCKS = 64, 64, 16, 4, 2
TRANSFORMER_FIXTURES = ("float", "int8", "dynamic", "int4_b32", "int4_channel", "int2_channel")


def token_samples(n: int = 8, seed: int = 0) -> np.ndarray:
    """Random token ids, shape (n, 1, SEQ), int32."""
    return np.random.default_rng(seed).integers(0, VOCAB, (n, 1, SEQ)).astype(np.int32)


def keras_transformer(seed: int = 5):
    tf = _tf()
    tf.keras.utils.set_random_seed(seed)
    L = tf.keras.layers
    inp = L.Input((SEQ,), batch_size=1, dtype="int32", name="tokens")
    x = L.Embedding(VOCAB, D_MODEL, name="embed")(inp)
    for b in range(BLOCKS):
        h = L.LayerNormalization(name=f"ln{b}a")(x)
        a = L.MultiHeadAttention(num_heads=HEADS, key_dim=D_MODEL // HEADS, name=f"attn{b}")(h, h)
        x = L.Add(name=f"res{b}a")([x, a])
        h = L.LayerNormalization(name=f"ln{b}b")(x)
        h = L.Dense(4 * D_MODEL, activation="gelu", name=f"ff{b}a")(h)
        h = L.Dense(D_MODEL, name=f"ff{b}b")(h)
        x = L.Add(name=f"res{b}b")([x, h])
    x = L.LayerNormalization(name="ln_final")(x)
    out = L.Dense(VOCAB, name="logits")(x)
    return tf.keras.Model(inp, out, name="transformer")


def _converted(mode: str) -> bytes:
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(keras_transformer())
    if mode == "int8":
        data = token_samples(32, seed=1)
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = lambda: ([data[i]] for i in range(len(data)))
    elif mode == "dynamic":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    return conv.convert()


def _litert_quantized(float_model: bytes, recipe_name: str) -> bytes:
    from litert_quantizer import Quantizer, recipe

    q = Quantizer(bytearray(float_model), getattr(recipe, recipe_name)())
    return bytes(q.quantize().quantized_model)


def build(name: str) -> bytes:
    if name in ("float", "int8", "dynamic"):
        return _converted(name)
    recipes = {"int4_b32": "dynamic_wi4b32_afp32", "int4_channel": "dynamic_wi4c_afp32", "int2_channel": "dynamic_wi2c_afp32"}
    if name in recipes:
        return _litert_quantized(_converted("float"), recipes[name])
    raise KeyError(name)


def transformer_path(root: Path, name: str) -> Path:
    """Path of a transformer fixture under `root` (built on first use)."""
    if name not in TRANSFORMER_FIXTURES:
        raise KeyError(f"unknown transformer fixture {name!r}")
    tf = _tf()
    import litert_quantizer

    version = getattr(litert_quantizer, "__version__", "")
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode() + str(version).encode()).hexdigest()[:12]
    folder = root / f"transformer-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_model(folder / f"{name}.tflite", lambda: build(name))


if __name__ == "__main__":
    import sys

    root = Path(sys.argv[1] if len(sys.argv) > 1 else ".fixture-cache")
    for n in TRANSFORMER_FIXTURES:
        p = transformer_path(root, n)
        print(f"{n:14s} {p.stat().st_size:>9d}  {p}")
