"""The Activations header names the layer by B's op and, where A's number differs, A's op too
(it showed B's number alone, while A's pane highlights A's)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from inspector.gui.compare.activation_view import ActivationView


def _title(b_op: int, a_op: int | None) -> str:
    m = NS(sqnr_db=31.5, clip_rate=None, count=10, range_use=None)
    layer = NS(op_index=b_op, float_op_index=a_op, op_type="CONV_2D", tensor_name="conv/out", metrics=m, dtype="float32")
    h = NS(rep_lo=None, steps_per_bin=0, used=10, total=10)
    return ActivationView._title(layer, h, 2)


def test_the_header_names_a_op_where_it_differs():
    assert "<b>#2 op 4 (A: op 3) CONV_2D</b>" in _title(4, 3)
    assert "<b>#2 op 4 CONV_2D</b>" in _title(4, 4)
    assert "<b>#2 op 4 CONV_2D</b>" in _title(4, None)
