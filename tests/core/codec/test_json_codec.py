"""The codec itself (`codec.json_record`) on small records: each encoding by type and each per-field
difference, checked against JSON written out by hand."""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import pytest

from inspector.core.codec.json_record import OMIT, JsonRecord, json_field
from inspector.core.writing import to_json_text


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Inner(JsonRecord):
    a: int
    b: float | None = None


@dataclass(frozen=True)
class Outer(JsonRecord):
    name: str = json_field(key="title")
    inner: Inner = json_field()
    inners: tuple[Inner, ...] = ()
    pair: tuple[int, str] = (0, "")
    ids: frozenset[int] = frozenset()
    by_name: dict[str, Inner] = json_field(default_factory=dict)
    color: Color = Color.RED
    values: np.ndarray = json_field(default_factory=lambda: np.zeros(0, np.int16), dtype=np.int16)
    db: float = json_field(default=0.0, none_as=math.inf)
    dbs: tuple[float, ...] = json_field(default=(), none_as=math.inf)
    seconds: float = json_field(default=0.0, ndigits=2)
    note: str | None = json_field(default=None, omit_none=True)
    cache: str = json_field(default="", skip=True)
    legacy: int = json_field(absent=-1, kw_only=True)

    JSON_EXTRA = {"count": lambda o: len(o.inners)}
    JSON_KEYS = ("title", "count", "inner", "inners", "pair", "ids", "by_name", "color", "values", "db", "dbs",
                 "seconds", "note", "legacy")  # fmt: skip


def _outer() -> Outer:
    return Outer("x", Inner(1, 0.5), (Inner(2), Inner(3, math.nan)), (4, "y"), frozenset({9, 2, 5}),
                 {"k": Inner(7, -math.inf)}, Color.BLUE, np.array([1, -2, 3], np.int16), math.inf,
                 (1.5, math.inf), 1.23456, "n", "not written", legacy=11)  # fmt: skip


def test_encoding_by_type_and_field_metadata() -> None:
    assert _outer().to_json() == {
        "title": "x", "count": 2, "inner": {"a": 1, "b": 0.5}, "inners": [{"a": 2, "b": None}, {"a": 3, "b": None}],
        "pair": [4, "y"], "ids": [2, 5, 9], "by_name": {"k": {"a": 7, "b": None}}, "color": "blue", "values": [1, -2, 3],
        "db": None, "dbs": [1.5, None], "seconds": 1.23, "note": "n", "legacy": 11,
    }  # fmt: skip
    assert list(_outer().to_json()) == list(Outer.JSON_KEYS)
    to_json_text(_outer().to_json())  # no inf/nan left: the writer refuses them
    bare = Outer("x", Inner(1), legacy=0).to_json()
    assert "note" not in bare and "cache" not in bare


def test_decoding_by_type_hints() -> None:
    o = _outer()
    back = Outer.from_json(o.to_json())
    assert back.inner == o.inner and back.pair == (4, "y") and isinstance(back.pair, tuple)
    assert back.ids == frozenset({2, 5, 9}) and back.color is Color.BLUE
    assert back.values.dtype == np.int16 and back.values.tolist() == [1, -2, 3]
    assert back.db == math.inf and back.dbs == (1.5, math.inf)  # null read back as none_as
    assert back.inners[1].b is None  # nan written as null reads back as None where None is allowed
    assert back.seconds == 1.23 and back.cache == "" and back.legacy == 11


def test_missing_keys_and_nulls() -> None:
    # an older file: absent keys take the field's default or its `absent` value
    o = Outer.from_json({"title": "t", "inner": {"a": 1}})
    assert (o.name, o.inner, o.inners, o.db, o.note, o.legacy, o.values.dtype) == ("t", Inner(1), (), 0.0, None, -1, np.int16)
    # null where the type admits no None: the default
    assert Outer.from_json({"title": "t", "inner": {"a": 1}, "inners": None, "legacy": None}).inners == ()
    with pytest.raises(KeyError):
        Outer.from_json({"inner": {"a": 1}})  # a required key
    # ints where floats are expected come back as floats
    assert Inner.from_json({"a": 1, "b": 2}) == Inner(1, 2.0) and isinstance(Inner.from_json({"a": 1, "b": 2}).b, float)


def test_numpy_scalars_are_plain_numbers() -> None:
    d = Inner(np.int64(3), np.float32(0.5)).to_json()  # type: ignore[arg-type]
    assert d == {"a": 3, "b": 0.5} and type(d["a"]) is int and type(d["b"]) is float


@dataclass(frozen=True)
class Plain:  # no to_json: written by its fields
    x: float
    y: tuple[int, ...]


@dataclass(frozen=True)
class Optional_(JsonRecord):
    kind: str
    flag: bool = json_field(default=False, omit_default=True)
    plain: Plain | None = None
    count: int = json_field(default=0)

    JSON_EXTRA = {"edit": lambda o: o.kind if o.kind.startswith("eq") else OMIT}


@dataclass(frozen=True)
class Lenient(JsonRecord):
    a: float
    db: float = json_field(none_as=math.inf)

    JSON_LENIENT = True


def test_keys_written_only_when_set() -> None:
    assert Optional_("keep").to_json() == {"kind": "keep", "plain": None, "count": 0}
    assert Optional_("equalize", True, Plain(math.nan, (1, 2))).to_json() == {
        "kind": "equalize", "flag": True, "plain": {"x": None, "y": [1, 2]}, "count": 0, "edit": "equalize"}  # fmt: skip
    assert Optional_.from_json({"kind": "keep"}) == Optional_("keep")
    back = Optional_.from_json(Optional_("eq", True, Plain(0.5, (3,)), 2).to_json())
    assert back == Optional_("eq", True, Plain(0.5, (3,)), 2) and isinstance(back.plain, Plain)


def test_lenient_record_reads_missing_keys_as_null() -> None:
    assert Lenient.from_json({}) == Lenient(None, math.inf)  # type: ignore[arg-type]
    with pytest.raises(KeyError):
        Inner.from_json({"b": 1.0})  # not lenient: "a" is required
