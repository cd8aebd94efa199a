"""Converter-built models for signatures, dynamic shapes and buffer offsets (issue 15).

Cached like fixture_models (own folder, keyed by this file and the TF version):
- `sig_float` / `sig_int8`: a tf.Module with two signatures, `prefill` (tokens [1, 8] float
  embeddings) and `decode` (one step plus a KV-cache input [1, 8, 16]), prefill/decode style;
- `dyn_float` / `dyn_int8`: a model whose input is [-1, -1] (input_signature [None, None]);
- `offset_float` / `offset_int8`: a small dense model written with buffer offsets (weights after
  the flatbuffer: `_experimental_use_buffer_offset`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf

SHAPE_FIXTURES = ("sig_float", "sig_int8", "dyn_float", "dyn_int8", "offset_float", "offset_int8")
DYN_WIDTH = 1760  # the sample width the dynamic model is tested with


def _two_signature_module(tf):
    rng = np.random.default_rng(3)

    class Block(tf.Module):
        def __init__(self) -> None:
            super().__init__()
            self.wq = tf.constant(rng.normal(0, 0.3, (16, 16)).astype(np.float32))
            self.wo = tf.constant(rng.normal(0, 0.3, (16, 16)).astype(np.float32))
            self.wc = tf.constant(rng.normal(0, 0.3, (16, 16)).astype(np.float32))

        @tf.function(input_signature=[tf.TensorSpec([1, 8, 16], tf.float32, name="embeddings")])
        def prefill(self, embeddings):
            h = tf.nn.relu(tf.matmul(tf.reshape(embeddings, [8, 16]), self.wq))
            kv = tf.reshape(tf.matmul(h, self.wc), [1, 8, 16])
            out = tf.matmul(h, self.wo)
            return {"hidden": tf.reshape(out, [1, 8, 16]), "kv_cache": kv}

        @tf.function(
            input_signature=[
                tf.TensorSpec([1, 1, 16], tf.float32, name="token"),
                tf.TensorSpec([1, 8, 16], tf.float32, name="kv_cache"),
            ]
        )
        def decode(self, token, kv_cache):
            q = tf.nn.relu(tf.matmul(tf.reshape(token, [1, 16]), self.wq))
            att = tf.nn.softmax(tf.matmul(q, tf.transpose(tf.reshape(kv_cache, [8, 16]))) * 0.25)
            ctx = tf.matmul(att, tf.reshape(kv_cache, [8, 16]))
            out = tf.tanh(tf.matmul(ctx + q, self.wo))
            return {"logits": tf.reshape(out, [1, 1, 16])}

    return Block()


def _rep_for_signatures():
    def gen():
        for i in range(16):
            rng = np.random.default_rng(i)
            yield "prefill", {"embeddings": rng.uniform(-1, 1, (1, 8, 16)).astype(np.float32)}
            yield "decode", {
                "token": rng.uniform(-1, 1, (1, 1, 16)).astype(np.float32),
                "kv_cache": rng.uniform(-1, 1, (1, 8, 16)).astype(np.float32),
            }

    return gen


def _signature_model(tf, quantize: bool) -> bytes:
    m = _two_signature_module(tf)
    conv = tf.lite.TFLiteConverter.from_concrete_functions(
        [m.prefill.get_concrete_function(), m.decode.get_concrete_function()], m
    )
    if quantize:
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = _rep_for_signatures()
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return conv.convert()


def _dynamic_model(tf, quantize: bool) -> bytes:
    rng = np.random.default_rng(5)
    scale = tf.constant(rng.uniform(0.5, 1.5, (1, 1)).astype(np.float32))

    class Dyn(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32, name="audio")])
        def serve(self, audio):
            x = tf.nn.relu(audio * scale + 0.1)
            y = tf.tanh(x - tf.reduce_mean(x, axis=1, keepdims=True))
            return {"features": y * 2.0 + x}

    m = Dyn()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([m.serve.get_concrete_function()], m)
    if quantize:

        def gen():
            for i in range(16):
                yield [np.random.default_rng(i).uniform(-1, 1, (1, DYN_WIDTH)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = gen
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return conv.convert()


def _offset_model(tf, quantize: bool) -> bytes:
    tf.keras.utils.set_random_seed(11)
    L = tf.keras.layers
    inp = L.Input((64,), name="x")
    h = L.Dense(128, activation="relu", name="fc1")(inp)
    h = L.Dense(96, activation="relu", name="fc2")(h)
    out = L.Dense(10, name="head")(h)
    model = tf.keras.Model(inp, out)
    conv = tf.lite.TFLiteConverter.from_keras_model(model)
    conv._experimental_use_buffer_offset = True
    if quantize:

        def gen():
            for i in range(16):
                yield [np.random.default_rng(i).uniform(-1, 1, (1, 64)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = gen
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
    return conv.convert()


def build(name: str) -> bytes:
    tf = _tf()
    kind, _, mode = name.partition("_")
    q = mode == "int8"
    if kind == "sig":
        return _signature_model(tf, q)
    if kind == "dyn":
        return _dynamic_model(tf, q)
    if kind == "offset":
        return _offset_model(tf, q)
    raise KeyError(name)


def cache_path(root: Path, name: str) -> Path:
    if name not in SHAPE_FIXTURES:
        raise KeyError(name)
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"shapes-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_model(folder / f"{name}.tflite", lambda: build(name))
