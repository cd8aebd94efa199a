"""The layer lists' Cause column names ops in the list's own numbering: A's list says which of
A's ops an inherited error comes from (B's op 2 is A's op 1 when B has a QUANTIZE op first)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from inspector.core.compare.result import ComparisonResult
from inspector.core.viewdata.layer_series import cause_cells


def _layer(b_op: int, a_op: int, cause: str | None = None, source: int | None = None):
    d = None if cause is None else NS(cause=cause, source_op=source, evidence="e", fix=None)
    return NS(op_index=b_op, float_op_index=a_op, diagnosis=d)


def _result(*layers) -> ComparisonResult:
    return ComparisonResult("a.tflite", "b.tflite", "optimized", "", 1, layers, (), ())  # type: ignore[arg-type]


def test_a_list_names_a_ops_and_b_list_names_b_ops():
    result = _result(_layer(1, 0), _layer(2, 1, "clipping"), _layer(3, 2), _layer(4, 3, "inherited", 2))
    b = cause_cells(result)
    a = cause_cells(result, float_side=True)
    assert b[4][0] == "← op 2"  # B's op 2
    assert a[3][0] == "← op 1" and 4 not in a  # the same layer on A's row 3 names A's op 1
    assert a[1][0] == b[2][0] != "" and a[0] == b[1] == ("", "")


def test_a_source_outside_the_comparison_keeps_its_number():
    result = _result(_layer(5, 4, "inherited", 9))
    assert cause_cells(result, float_side=True)[4][0] == "← op 9"


def test_every_cause_cell_uses_the_diagnosis_word():
    """The Cause cell says what the diagnosis, the CLI and the report say ("resolution" read
    "coarse range" there alone); underscores become spaces, nothing else is renamed."""
    from inspector.core.compare.diagnosis import CAUSES
    from inspector.core.viewdata.layer_series import CAUSE_LABELS

    for cause in CAUSES:
        if cause not in ("none", "inherited"):
            assert CAUSE_LABELS[cause] == cause.replace("_", " ").replace("weight channels", "uneven weight channels"), cause
