"""Build realistic float/quantized .tflite fixtures with the TF converter.

Used by the test suite (cached once per source version), the benchmarks and the script that
makes the bundled example pair. TensorFlow is imported lazily: it is a test-only dependency.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_model

INPUT_SHAPE = (32, 32, 3)
NUM_CLASSES = 10

# name -> description; every fixture is a file `<name>.tflite` in the cache folder.
FIXTURES = {
    "float": "float32 CNN: conv, depthwise, residual add, pool, dense, softmax",
    "int8_io": "full integer int8, int8 inputs and outputs",
    "int8": "full integer int8, float inputs and outputs (QUANTIZE/DEQUANTIZE at the edges)",
    "int8_per_tensor": "full integer int8 with per-tensor weights",
    "dynamic": "dynamic range: int8 weights, float activations (hybrid kernels)",
    "float16": "float16 weights behind DEQUANTIZE",
    "a16w8": "16x8: int16 activations, int8 weights",
    "no_signature": "the float model with its signature removed",
    "int8_no_signature": "the int8 model with its signature removed",
    "custom_op": "the float model with SOFTMAX replaced by a custom op",
    "sparse": "float model with a block-sparse dense layer behind DENSIFY",
    "stateful": "model with a resource variable (stateful streaming), float",
    "stateful_int8": "model with a resource variable, int8",
    "multi_subgraph": "model with a WHILE loop (several subgraphs)",
}


def _tf():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
    import tensorflow as tf

    return tf


def cache_key() -> str:
    tf = _tf()
    src = Path(__file__).read_bytes()
    return hashlib.sha256(src + tf.__version__.encode()).hexdigest()[:12]


def representative_images(n: int = 32, seed: int = 0, shape=INPUT_SHAPE) -> np.ndarray:
    """Smooth random images in [-1, 1]: closer to real image statistics than white noise."""
    rng = np.random.default_rng(seed)
    base = rng.normal(0, 1, (n, shape[0] // 4, shape[1] // 4, shape[2])).astype(np.float32)
    img = np.repeat(np.repeat(base, 4, axis=1), 4, axis=2)
    img += 0.3 * rng.normal(0, 1, img.shape).astype(np.float32)
    return np.tanh(img).astype(np.float32)


def _rep_dataset(n: int = 32, seed: int = 0, shape=INPUT_SHAPE) -> Callable[[], Iterator[list[np.ndarray]]]:
    data = representative_images(n, seed, shape)

    def gen():
        for i in range(len(data)):
            yield [data[i : i + 1]]

    return gen


def keras_cnn(seed: int = 1, input_shape=INPUT_SHAPE, width: int = 16):
    tf = _tf()
    tf.keras.utils.set_random_seed(seed)
    L = tf.keras.layers
    inp = L.Input(input_shape, name="image")
    x = L.Conv2D(width, 3, padding="same", activation="relu", name="conv1")(inp)
    x = L.DepthwiseConv2D(3, padding="same", activation="relu", name="dw1")(x)
    y = L.Conv2D(width, 1, name="pw1")(x)
    x = L.Add(name="add1")([x, y])
    x = L.Conv2D(2 * width, 3, strides=2, padding="same", activation="relu", name="conv2")(x)
    x = L.MaxPooling2D(name="pool")(x)
    x = L.Flatten(name="flatten")(x)
    x = L.Dense(32, activation="relu", name="fc1")(x)
    x = L.Dense(NUM_CLASSES, name="logits")(x)
    out = L.Softmax(name="probs")(x)
    return tf.keras.Model(inp, out, name="cnn")


def convert(keras_model, mode: str, rep=None) -> bytes:
    """Convert a Keras model: mode in float | int8 | int8_io | int8_per_tensor | dynamic | float16 | a16w8."""
    tf = _tf()
    conv = tf.lite.TFLiteConverter.from_keras_model(keras_model)
    rep = rep or _rep_dataset()
    if mode == "float":
        pass
    elif mode in ("int8", "int8_io", "int8_per_tensor"):
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [tf.lite.OpsSet.TFLITE_BUILTINS_INT8]
        if mode == "int8_io":
            conv.inference_input_type = tf.int8
            conv.inference_output_type = tf.int8
        if mode == "int8_per_tensor":
            conv._experimental_disable_per_channel = True
    elif mode == "dynamic":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
    elif mode == "float16":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.target_spec.supported_types = [tf.float16]
    elif mode == "a16w8":
        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
        conv.target_spec.supported_ops = [
            tf.lite.OpsSet.EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8
        ]
    else:
        raise ValueError(mode)
    return conv.convert()


def strip_signatures(data: bytes) -> bytes:
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.convert_bytearray_to_object(bytearray(data))
    m.signatureDefs = []
    return bytes(fu.convert_object_to_bytearray(m))


def make_custom_op(data: bytes, builtin: str = "SOFTMAX", custom_name: str = "MyCustomSoftmax") -> bytes:
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.convert_bytearray_to_object(bytearray(data))
    code = getattr(schema.BuiltinOperator, builtin)
    for oc in m.operatorCodes:
        if max(oc.builtinCode, oc.deprecatedBuiltinCode) == code:
            oc.builtinCode = schema.BuiltinOperator.CUSTOM
            oc.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
            oc.customCode = custom_name.encode()
    for sg in m.subgraphs:
        for op in sg.operators:
            if m.operatorCodes[op.opcodeIndex].customCode == custom_name.encode():
                op.builtinOptionsType = 0
                op.builtinOptions = None
    return bytes(fu.convert_object_to_bytearray(m))


def _sparse_model(tf) -> bytes:
    tf.keras.utils.set_random_seed(3)
    L = tf.keras.layers
    inp = L.Input((64,), name="features")
    dense = L.Dense(64, activation="relu", name="sparse_fc")
    x = dense(inp)
    out = L.Dense(8, name="head")(x)
    km = tf.keras.Model(inp, out)
    w, b = dense.get_weights()
    mask = np.zeros_like(w)
    rng = np.random.default_rng(0)
    # keep 10% of 4x1 blocks
    keep = rng.random((w.shape[0] // 4, w.shape[1])) < 0.1
    mask[np.repeat(keep, 4, axis=0)] = 1
    dense.set_weights([w * mask, b])
    conv = tf.lite.TFLiteConverter.from_keras_model(km)
    conv.optimizations = [tf.lite.Optimize.EXPERIMENTAL_SPARSITY]
    return conv.convert()


def _stateful_model(tf, quantize: bool) -> bytes:
    class Streaming(tf.Module):
        def __init__(self):
            super().__init__()
            rng = np.random.default_rng(5)
            self.w = tf.constant(rng.normal(0, 0.3, (16, 32)).astype(np.float32))
            self.state = tf.Variable(tf.zeros((1, 32)), name="state")

        @tf.function(input_signature=[tf.TensorSpec((1, 16), tf.float32, name="frame")])
        def __call__(self, frame):
            h = tf.nn.relu(tf.matmul(frame, self.w))
            new = 0.5 * self.state + h
            self.state.assign(new)
            return {"state_out": new}

    mod = Streaming()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([mod.__call__.get_concrete_function()], mod)
    conv.experimental_enable_resource_variables = True
    if quantize:
        rng = np.random.default_rng(6)

        def rep():
            for _ in range(16):
                yield [rng.normal(0, 1, (1, 16)).astype(np.float32)]

        conv.optimizations = [tf.lite.Optimize.DEFAULT]
        conv.representative_dataset = rep
    return conv.convert()


def _while_model(tf) -> bytes:
    class Loop(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec((1, 8), tf.float32, name="x")])
        def __call__(self, x):
            i = tf.constant(0)

            def cond(i, v):
                return i < 3

            def body(i, v):
                return i + 1, tf.nn.tanh(v * 1.5 + 0.1)

            _, v = tf.while_loop(cond, body, [i, x])
            return {"y": v}

    mod = Loop()
    conv = tf.lite.TFLiteConverter.from_concrete_functions([mod.__call__.get_concrete_function()], mod)
    return conv.convert()


def build(name: str) -> bytes:
    tf = _tf()
    if name in ("float", "int8_io", "int8", "int8_per_tensor", "dynamic", "float16", "a16w8"):
        return convert(keras_cnn(), name)
    if name == "no_signature":
        return strip_signatures(build("float"))
    if name == "int8_no_signature":
        return strip_signatures(build("int8"))
    if name == "custom_op":
        return make_custom_op(build("float"))
    if name == "sparse":
        return _sparse_model(tf)
    if name == "stateful":
        return _stateful_model(tf, quantize=False)
    if name == "stateful_int8":
        return _stateful_model(tf, quantize=True)
    if name == "multi_subgraph":
        return _while_model(tf)
    raise KeyError(name)


class FixtureCache:
    """Lazily builds fixtures into a folder keyed by this file's content and the TF version."""

    def __init__(self, root: Path) -> None:
        self.dir = root / cache_key()
        self.dir.mkdir(parents=True, exist_ok=True)

    def path(self, name: str) -> Path:
        if name not in FIXTURES:
            raise KeyError(f"unknown fixture {name!r}")
        return cached_model(self.dir / f"{name}.tflite", lambda: build(name))

    def all(self) -> dict[str, Path]:
        return {n: self.path(n) for n in FIXTURES}


if __name__ == "__main__":
    cache = FixtureCache(Path(sys.argv[1] if len(sys.argv) > 1 else ".fixture-cache"))
    for n, p in cache.all().items():
        print(f"{n:20s} {p.stat().st_size:>9d}  {p}")
