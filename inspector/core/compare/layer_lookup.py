"""A result's layer by B's op index (`layer_for_op`, `layer_position`), for the result objects
whose `layers` each carry an `op_index` (`ComparisonResult`, `RuntimeParityResult`).

An op with several outputs has one layer per output; the FIRST of them (in `layers` order) is
the op's layer, as in `diagnosis.diagnose` (the first output of each op decides). The index is
built once per result object on first use (results are frozen; `dataclasses.replace` makes a new
object and so a new index) and is not a field: equality and JSON are untouched.
"""

from __future__ import annotations

from functools import cached_property
from typing import Generic, Protocol, TypeVar


class _HasOp(Protocol):
    @property
    def op_index(self) -> int: ...


L = TypeVar("L", bound=_HasOp)


class LayersByOp(Generic[L]):
    """Mixed into a frozen dataclass with a field `layers: tuple[L, ...]`."""

    layers: tuple[L, ...]

    @cached_property
    def _positions_by_op(self) -> dict[int, int]:
        out: dict[int, int] = {}
        for k, layer in enumerate(self.layers):
            out.setdefault(layer.op_index, k)
        return out

    def layer_position(self, op_index: int | None) -> int | None:
        """Position in `layers` of B's op `op_index` (its first layer); None: the op has no layer."""
        return None if op_index is None else self._positions_by_op.get(op_index)

    def layer_for_op(self, op_index: int | None) -> L | None:
        """The first layer of B's op `op_index`; None: the op has no layer (or `op_index` is None)."""
        k = self.layer_position(op_index)
        return None if k is None else self.layers[k]
