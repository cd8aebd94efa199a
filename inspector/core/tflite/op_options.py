"""Turn an operator's builtin options table into a plain dict of scalars.

Generic over every options class of the `tflite` package: each zero-argument accessor that
returns a scalar becomes a snake_case key; enums with a known name table become strings.
"""

from __future__ import annotations

import inspect
import re
from functools import cache
from typing import Any

import tflite

_OPTION_CLASS_NAMES = {v: k for k, v in vars(tflite.BuiltinOptions).items() if not k.startswith("_")}
_ENUMS = {
    "fused_activation_function": tflite.ActivationFunctionType,
    "padding": tflite.Padding,
}
_SKIP = re.compile(r"^(Init|GetRootAs.*|.*BufferHasIdentifier|.*AsNumpy|.*Length|.*IsNone)$")


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


@cache
def _enum_names(enum_cls: type) -> dict[int, str]:
    return {v: k for k, v in vars(enum_cls).items() if not k.startswith("_")}


@cache
def _accessors(cls: type) -> tuple[tuple[str, str], ...]:
    out = []
    for name, fn in vars(cls).items():
        if name.startswith("_") or not callable(fn) or _SKIP.match(name):
            continue
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            continue
        if len(params) == 1:
            out.append((name, _snake(name)))
    return tuple(out)


def op_options(op: tflite.Operator) -> dict[str, Any]:
    kind = op.BuiltinOptionsType()
    cls_name = _OPTION_CLASS_NAMES.get(kind)
    if not kind or cls_name is None:
        return {}
    cls = getattr(tflite, cls_name, None)
    table = op.BuiltinOptions()
    if cls is None or table is None:
        return {}
    obj = cls()
    obj.Init(table.Bytes, table.Pos)
    out: dict[str, Any] = {}
    for meth, key in _accessors(cls):
        try:
            v = getattr(obj, meth)()
        except Exception:  # accessor of a nested table or bad offset: skip, not fatal
            continue
        if isinstance(v, bool | int | float):
            enum = _ENUMS.get(key)
            out[key] = _enum_names(enum).get(v, v) if enum and isinstance(v, int) else v  # enums are ints
        elif isinstance(v, bytes):
            out[key] = v.decode("utf-8", "replace")
    return out
