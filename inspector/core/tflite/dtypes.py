"""TFLite tensor types <-> numpy names, and integer limits of quantized types."""

from __future__ import annotations

import tflite

TYPE_NAMES: dict[int, str] = {v: k for k, v in vars(tflite.TensorType).items() if not k.startswith("_")}
# Types newer than the `tflite` package's schema (LiteRT schema.fbs TensorType).
TYPE_NAMES.update({19: "INT2", 20: "UINT4", 21: "FLOAT8_E4M3FN", 22: "FLOAT8_E5M2"})

_NUMPY_NAMES = {
    "FLOAT32": "float32",
    "FLOAT16": "float16",
    "FLOAT64": "float64",
    "INT32": "int32",
    "UINT8": "uint8",
    "INT64": "int64",
    "STRING": "string",
    "BOOL": "bool",
    "INT16": "int16",
    "COMPLEX64": "complex64",
    "COMPLEX128": "complex128",
    "INT8": "int8",
    "UINT64": "uint64",
    "UINT32": "uint32",
    "UINT16": "uint16",
    "RESOURCE": "resource",
    "VARIANT": "variant",
    "INT4": "int4",
    "BFLOAT16": "bfloat16",
    "INT2": "int2",
    "UINT4": "uint4",
    "FLOAT8_E4M3FN": "float8_e4m3fn",
    "FLOAT8_E5M2": "float8_e5m2",
}

# The integer types a quantized activation (and a quantized model input) is stored in.
QUANTIZED_DTYPES: tuple[str, ...] = ("int8", "uint8", "int16")
# Those and the sub-byte types quantized weights may also be stored in.
QUANTIZED_STORAGE_DTYPES: tuple[str, ...] = (*QUANTIZED_DTYPES, "int4", "uint4", "int2")

# Sub-byte integer types: (bits per value, signed). Packed low bits first, as LiteRT stores them.
PACKED_INT_TYPES: dict[str, tuple[int, bool]] = {"int2": (2, True), "int4": (4, True), "uint4": (4, False)}

# Integer range of each quantized storage type: (qmin, qmax).
INT_LIMITS: dict[str, tuple[int, int]] = {
    "int2": (-2, 1),
    "int4": (-8, 7),
    "uint4": (0, 15),
    "int8": (-128, 127),
    "uint8": (0, 255),
    "int16": (-32768, 32767),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}


def numpy_dtype_name(tensor_type: int) -> str:
    name = TYPE_NAMES.get(tensor_type)
    if name is None:
        return f"unknown({tensor_type})"
    return _NUMPY_NAMES.get(name, name.lower())


def is_float(dtype: str) -> bool:
    return dtype in ("float32", "float16", "float64", "bfloat16")
