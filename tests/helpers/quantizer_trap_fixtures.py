"""Converter-built float models that trip litert-quantizer or the LiteRT runtime (quantizer route).

- `legacy_opcodes`: a float32 conv model without a signature whose operator codes sit only in
  the legacy `deprecated_builtin_code` field, as in files written before the schema had
  `builtin_code`. The quantizer reads every op as ADD and gives the conv an int8 bias
  (`bias->type != kTfLiteInt32 (INT8 != INT32)`).
- `dead_depthwise`: a MobileNetV2-like inverted residual block whose depthwise + ReLU6 has an
  extreme negative bias, so its output is 0 on every sample; the quantizer's scale for it makes
  the kernel's ReLU6 clamp overflow (`DEPTHWISE_CONV_2D ... no_integer_overflow_from_quantization`).
- `mobilenet_v2_160`: Keras MobileNetV2 (random weights, 160x160) converted to float: its
  activations shrink to ~1e-11 through the blocks, the quantizer's scales for them overflow the
  depthwise ReLU6 clamps, and the model the issue reports as refused.
- `transpose_conv_bias` (+ `transpose_conv_builtin`, the same model before the rewrite): a
  Conv2DTranspose + bias converted by TF and rewritten into MediaPipe's
  `Convolution2DTransposeBias` custom op, which only the XNNPACK delegate provides.
"""

from __future__ import annotations

import hashlib
import struct
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_model
from tests.helpers.fixture_models import _tf, convert, strip_signatures

TRAP_FIXTURES = (
    "legacy_opcodes",
    "dead_depthwise",
    "mobilenet_v2_160",
    "transpose_conv_bias",
    "transpose_conv_builtin",
)


def _legacy_opcodes() -> bytes:
    from ai_edge_litert.tools import flatbuffer_utils as fu

    tf = _tf()
    tf.keras.utils.set_random_seed(3)
    L = tf.keras.layers
    inp = L.Input((16, 16, 3), name="image")
    a = L.Conv2D(8, 3, padding="same", activation="relu", name="c1", bias_initializer="ones")(inp)
    b = L.Conv2D(8, 3, padding="same", name="c2", bias_initializer="ones")(a)
    x = L.Add(name="add")([a, b])
    out = L.Conv2D(4, 1, name="head", bias_initializer="ones")(x)
    data = strip_signatures(convert(tf.keras.Model(inp, out), "float"))
    m = fu.convert_bytearray_to_object(bytearray(data))
    for oc in m.operatorCodes:  # as an old writer left them: only the legacy field is set
        oc.deprecatedBuiltinCode = max(oc.builtinCode, oc.deprecatedBuiltinCode)
        oc.builtinCode = 0
    return bytes(fu.convert_object_to_bytearray(m))


def _dead_depthwise() -> bytes:
    tf = _tf()
    tf.keras.utils.set_random_seed(5)
    L = tf.keras.layers
    inp = L.Input((16, 16, 3), name="image")
    stem = L.ReLU(6.0, name="stem_relu6")(L.Conv2D(8, 3, padding="same", name="stem")(inp))
    x = L.ReLU(6.0, name="expand_relu6")(L.Conv2D(16, 1, name="expand")(stem))
    dead = tf.keras.initializers.Constant(-50.0)  # extreme: ReLU6 output is 0 everywhere
    x = L.DepthwiseConv2D(3, padding="same", name="dw", bias_initializer=dead)(x)
    x = L.ReLU(6.0, name="dw_relu6")(x)
    x = L.Conv2D(8, 1, name="project")(x)
    x = L.Add(name="residual")([stem, x])
    x = L.GlobalAveragePooling2D(name="gap")(x)
    out = L.Dense(4, name="logits")(x)
    return convert(tf.keras.Model(inp, out), "float")


def _mobilenet_v2_160() -> bytes:
    tf = _tf()
    tf.keras.utils.set_random_seed(7)
    km = tf.keras.applications.MobileNetV2(weights=None, input_shape=(160, 160, 3), classes=1000)
    return convert(km, "float")


def _transpose_conv_builtin() -> bytes:
    tf = _tf()
    tf.keras.utils.set_random_seed(3)
    L = tf.keras.layers
    inp = L.Input((8, 8, 3), name="image")
    x = L.Conv2D(8, 3, padding="same", activation="relu", name="enc")(inp)
    x = L.Conv2DTranspose(4, 2, strides=2, padding="same", name="up", bias_initializer="ones")(x)
    out = L.Conv2D(2, 1, name="head")(x)
    return convert(tf.keras.Model(inp, out), "float")


def _transpose_conv_bias() -> bytes:
    """TRANSPOSE_CONV(output_shape, weights, input, bias) -> CUSTOM Convolution2DTransposeBias
    (input, weights, bias) with TfLiteTransposeConvParams {padding, stride_w, stride_h} as its
    custom options (the layout MediaPipe and the XNNPACK delegate read)."""
    from ai_edge_litert import schema_py_generated as schema
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.convert_bytearray_to_object(bytearray(_transpose_conv_builtin()))
    code = schema.OperatorCodeT()
    code.builtinCode = code.deprecatedBuiltinCode = schema.BuiltinOperator.CUSTOM
    code.customCode, code.version = b"Convolution2DTransposeBias", 1
    m.operatorCodes.append(code)
    tconv = schema.BuiltinOperator.TRANSPOSE_CONV
    for op in m.subgraphs[0].operators:
        oc = m.operatorCodes[op.opcodeIndex]
        if max(oc.builtinCode, oc.deprecatedBuiltinCode) != tconv:
            continue
        opts = op.builtinOptions
        padding = {schema.Padding.SAME: 1, schema.Padding.VALID: 2}[opts.padding]  # TfLitePadding
        op.opcodeIndex = len(m.operatorCodes) - 1
        op.inputs = np.array([op.inputs[2], op.inputs[1], op.inputs[3]], dtype=np.int32)
        op.builtinOptionsType, op.builtinOptions = 0, None
        op.customOptions = np.frombuffer(
            struct.pack("<iii", padding, opts.strideW, opts.strideH), dtype=np.uint8
        )
    return bytes(fu.convert_object_to_bytearray(m))


BUILDERS = {
    "legacy_opcodes": _legacy_opcodes,
    "dead_depthwise": _dead_depthwise,
    "mobilenet_v2_160": _mobilenet_v2_160,
    "transpose_conv_bias": _transpose_conv_bias,
    "transpose_conv_builtin": _transpose_conv_builtin,
}


def trap_path(root: Path, name: str) -> Path:
    tf = _tf()
    key = hashlib.sha256(Path(__file__).read_bytes() + tf.__version__.encode()).hexdigest()[:12]
    folder = root / f"traps-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_model(folder / f"{name}.tflite", lambda: BUILDERS[name]())
