"""One JSON codec for the result dataclasses: `to_json` / `from_json` from the fields.

A dataclass that inherits `JsonRecord` gets `to_json()` (a JSON-ready dict) and
`from_json(d)` (the dataclass back). Each field is written under its name, in field order, encoded
by its value: a nested record (anything with `to_json`) by its own `to_json`, another dataclass
by its fields, tuples and lists as lists, frozensets as sorted lists, dicts key by key, numpy
arrays and scalars as lists and numbers, Enums by value, and a float that JSON cannot hold (inf,
nan) as null (`writing.json_float`).
Decoding reads each field by its resolved type hint (`typing.get_type_hints`): nested records by
their `from_json`, tuples back to tuples, arrays to numpy arrays of the field's dtype; a key the
dict lacks takes the field's default.

What differs from that mapping is said next to the field, `json_field(...)` (a JSON key other than
the field name, omitted when None, not written, a custom encoder/decoder, rounding, what null
decodes to), and on the class: `JSON_KEYS` (the key order, when it is not the field order),
`JSON_LENIENT` (a missing key reads as null) and `JSON_EXTRA` (keys computed from the record,
written and not read back; a key whose function returns `OMIT` is left out).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass
from typing import Any, ClassVar, Self, TypeVar

from inspector.core.writing import json_float

T = TypeVar("T")
_META = "json"


@dataclass(frozen=True, slots=True)
class JsonField:
    """How one field differs from the plain mapping."""

    key: str | None = None  # the JSON key (None: the field name)
    omit_none: bool = False  # not written when None
    omit_default: bool = False  # not written when equal to the field's default (a plain default, not a factory)
    skip: bool = False  # neither written nor read (the decoder takes the field's default)
    encode: Callable[[Any], Any] | None = None  # value -> JSON (replaces the encoding by type)
    decode: Callable[[Any], Any] | None = None  # JSON -> value (replaces the decoding by type)
    ndigits: int | None = None  # round a float to this many places when writing
    none_as: Any = None  # what null decodes to (a float field, or each element of a tuple of floats)
    dtype: Any = None  # numpy dtype of an np.ndarray field (default float32)
    absent: Any = None  # the value when the key is missing (older files), when `has_absent`
    has_absent: bool = False


def json_field(*, default: Any = MISSING, default_factory: Any = MISSING, kw_only: Any = MISSING, **meta: Any) -> Any:
    """`dataclasses.field` with the JSON metadata of `JsonField` (`meta`: `json_meta`'s keywords).
    (A field without a default that follows fields without one takes
    `dataclasses.field(metadata=json_meta(...))` instead: type checkers read any other call as a
    default.)"""
    return dataclasses.field(default=default, default_factory=default_factory, kw_only=kw_only, metadata=json_meta(**meta))


def json_meta(
    *,
    key: str | None = None,
    omit_none: bool = False,
    omit_default: bool = False,
    skip: bool = False,
    encode: Callable[[Any], Any] | None = None,
    decode: Callable[[Any], Any] | None = None,
    ndigits: int | None = None,
    none_as: Any = None,
    dtype: Any = None,
    absent: Any = MISSING,
) -> dict[str, JsonField]:
    """The `dataclasses.field` metadata that `json_field` gives."""
    return {_META: JsonField(key, omit_none, omit_default, skip, encode, decode, ndigits, none_as, dtype, absent, absent is not MISSING)}


_PLAIN = JsonField()
_NUMBERS = frozenset({float, int})
_PLAIN_TYPES = frozenset({float, int, str, bool})
OMIT: Any = object()  # a `JSON_EXTRA` function's value for "no such key in this record"


@dataclass(frozen=True, slots=True)
class _Slot:
    name: str
    key: str
    spec: JsonField
    hint: Any
    default: Any  # MISSING when required
    optional: bool  # the type admits None


def encode_value(v: Any) -> Any:
    """One value as JSON holds it (see the module docstring)."""
    if v is None or isinstance(v, bool | str | int):
        return v
    if isinstance(v, float):
        return json_float(v)
    if isinstance(v, tuple | list):
        if set(map(type, v)) <= _NUMBERS:  # per-channel lists: thousands of numbers, one pass
            return list(v) if all(map(math.isfinite, v)) else [json_float(x) for x in v]
        return [encode_value(x) for x in v]
    if isinstance(v, frozenset | set):
        return [encode_value(x) for x in sorted(v)]
    if isinstance(v, dict):
        return {k: encode_value(x) for k, x in v.items()}
    if isinstance(v, enum.Enum):
        return encode_value(v.value)
    to_json = getattr(v, "to_json", None)
    if callable(to_json):
        return to_json()
    if dataclasses.is_dataclass(v) and not isinstance(v, type):  # a plain dataclass inside a record
        return encode(v)
    np = sys.modules.get("numpy")  # no numpy value without numpy loaded: it is not imported here
    if np is not None and isinstance(v, np.ndarray):
        return v.tolist()
    if np is not None and isinstance(v, np.generic):
        return encode_value(v.item())
    raise TypeError(f"no JSON encoding for {type(v).__name__}")


@functools.cache
def _shape(hint: Any) -> tuple[Any, tuple[Any, ...], Any]:
    """origin, arguments and, for `X | None`, X (else None) of a type hint."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    arms = [a for a in args if a is not type(None)] if origin is typing.Union or origin is types.UnionType else []
    return origin, args, arms[0] if len(arms) == 1 else None


def decode_value(hint: Any, v: Any, none_as: Any = None, dtype: Any = None) -> Any:
    """`v` (read from JSON) as the type `hint` says; null as `none_as` where a value is expected."""
    if v is None:
        return none_as
    if hint in _PLAIN_TYPES:
        return hint(v)
    origin, args, arm = _shape(hint)
    if arm is not None:
        return decode_value(arm, v, none_as, dtype)
    if origin is typing.Union or origin is types.UnionType:
        return v
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            if args[0] in _PLAIN_TYPES:  # a list of numbers: one pass
                conv = args[0]
                return tuple(map(conv, v)) if None not in v else tuple(none_as if x is None else conv(x) for x in v)
            return tuple(decode_value(args[0], x, none_as, dtype) for x in v)
        return tuple(decode_value(a, x, none_as, dtype) for a, x in zip(args, v, strict=True)) if args else tuple(v)
    if origin is list:
        return [decode_value(args[0], x, none_as, dtype) for x in v] if args else list(v)
    if origin is frozenset:
        return frozenset(decode_value(args[0], x) for x in v) if args else frozenset(v)
    if origin is dict:
        return {k: decode_value(args[1], x) for k, x in v.items()} if args else dict(v)
    if hint is float:
        return float(v)
    if hint is int:
        return int(v)
    if hint is bool:
        return bool(v)
    if hint is str:
        return str(v)
    if getattr(hint, "__module__", "") == "numpy" and getattr(hint, "__name__", "") == "ndarray":
        import numpy as np

        return np.asarray(v, dtype or np.float32)
    if isinstance(hint, type):
        if issubclass(hint, enum.Enum):
            return hint(v)
        from_json = getattr(hint, "from_json", None)
        if callable(from_json):
            return from_json(v)
        if dataclasses.is_dataclass(hint):  # a plain dataclass inside a record
            return decode(hint, v)
    return v


_SLOTS: dict[tuple[type, bool], tuple[_Slot, ...]] = {}


def _slots(cls: type, typed: bool) -> tuple[_Slot, ...]:
    """The fields of `cls` with their JSON metadata; `typed`: with their resolved type hints (only
    decoding needs them: a record whose hints do not resolve at run time still encodes)."""
    got = _SLOTS.get((cls, typed))
    if got is None:
        hints = typing.get_type_hints(cls) if typed else {}
        got = tuple(
            _Slot(f.name, f.metadata.get(_META, _PLAIN).key or f.name, f.metadata.get(_META, _PLAIN), hints.get(f.name, Any),
                  f.default if f.default is not MISSING else (MISSING if f.default_factory is MISSING else f.default_factory),
                  _admits_none(hints.get(f.name, Any)))
            for f in dataclasses.fields(cls)
        )
        _SLOTS[(cls, typed)] = got
    return got


def encode(obj: Any) -> dict[str, Any]:
    """A dataclass record as a JSON-ready dict (its fields, `JSON_EXTRA`, in `JSON_KEYS` order)."""
    out: dict[str, Any] = {}
    for s in _slots(type(obj), False):
        if s.spec.skip:
            continue
        v = getattr(obj, s.name)
        if v is None and s.spec.omit_none or s.spec.omit_default and v == s.default:
            continue
        if s.spec.encode is not None:
            out[s.key] = s.spec.encode(v)
        elif s.spec.ndigits is not None and isinstance(v, float):
            out[s.key] = json_float(round(v, s.spec.ndigits))
        else:
            out[s.key] = encode_value(v)
    extra: Mapping[str, Callable[[Any], Any]] = getattr(obj, "JSON_EXTRA", {})
    for k, fn in extra.items():
        v = fn(obj)
        if v is not OMIT:
            out[k] = encode_value(v)
    order: tuple[str, ...] | None = getattr(obj, "JSON_KEYS", None)
    if order is not None:
        out = {k: out[k] for k in order if k in out}
    return out


def _admits_none(hint: Any) -> bool:
    return hint is Any or type(None) in typing.get_args(hint)


def decode(cls: type[T], d: Mapping[str, Any], **given: Any) -> T:
    """The record `cls` from a dict `encode` wrote: a missing key (or a null where the type has no
    None) takes the field's default (or its `absent` value), else, when `cls.JSON_LENIENT`, reads as
    null; `given` fields are taken as they are."""
    kw: dict[str, Any] = dict(given)
    lenient = getattr(cls, "JSON_LENIENT", False)
    for s in _slots(cls, True):
        if s.name in given:
            continue
        v = d.get(s.key)
        has_default = s.default is not MISSING or s.spec.has_absent
        if s.spec.skip or s.key not in d or v is None and has_default and not s.optional and s.spec.none_as is None:
            if s.spec.has_absent:
                kw[s.name] = s.spec.absent
            elif lenient and not has_default and not s.spec.skip:
                kw[s.name] = s.spec.none_as
            elif not has_default and not s.spec.skip:
                raise KeyError(s.key)
            continue  # the dataclass fills its default
        kw[s.name] = s.spec.decode(v) if s.spec.decode is not None else decode_value(s.hint, v, s.spec.none_as, s.spec.dtype)
    return cls(**kw)


class JsonRecord:
    """`to_json` / `from_json` of a dataclass by `encode` / `decode`."""

    __slots__ = ()

    JSON_KEYS: ClassVar[tuple[str, ...] | None] = None
    JSON_LENIENT: ClassVar[bool] = False  # a missing key without a default reads as null (not a KeyError)
    JSON_EXTRA: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    def to_json(self) -> dict[str, Any]:
        return encode(self)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Self:
        return decode(cls, d)


def inf_if_none(v: float | None) -> float:
    """A float read back from JSON where null stood for +inf (an SQNR without error)."""
    return math.inf if v is None else float(v)
