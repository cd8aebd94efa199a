"""The layer lists' Cause column names ops in one numbering, B's (the layer's identity), on both
lists: A's list says "B op" and its tooltip which of A's ops that is (B's op 2 is A's op 1 when B
has a QUANTIZE op first). Issue 35, item 9: A's list said "← op 1" (A's) beside a tooltip and a
fix naming op 2 (B's)."""

from __future__ import annotations

from types import SimpleNamespace as NS

from inspector.core.compare.result import ComparisonResult
from inspector.core.viewdata.layer_series import cause_cells


def _layer(b_op: int, a_op: int, cause: str | None = None, source: int | None = None):
    d = None if cause is None else NS(cause=cause, source_op=source, evidence="e", fix=None)
    return NS(op_index=b_op, float_op_index=a_op, diagnosis=d)


def _result(*layers) -> ComparisonResult:
    return ComparisonResult("a.tflite", "b.tflite", "optimized", "", 1, layers, (), ())  # type: ignore[arg-type]


def test_both_lists_name_b_ops_and_a_list_says_so():
    result = _result(_layer(1, 0), _layer(2, 1, "clipping"), _layer(3, 2), _layer(4, 3, "inherited", 2))
    b = cause_cells(result)
    a = cause_cells(result, float_side=True)
    assert b[4][0] == "← op 2"  # B's op 2
    assert a[3][0] == "← B op 2" and 4 not in a  # the same layer on A's row 3: B's op 2, said to be B's
    assert a[3][1] == b[4][1] + "\n(op numbers are model B's, the layer numbering of the comparison; B's op 2 is A's op 1)"
    assert a[1][0] == b[2][0] != "" and a[1][1].startswith(b[2][1]) and a[0] == b[1] == ("", "")


def test_a_source_outside_the_comparison_keeps_its_number():
    result = _result(_layer(5, 4, "inherited", 9))
    a = cause_cells(result, float_side=True)[4]
    assert a[0] == "← B op 9" and a[1].endswith("(op numbers are model B's, the layer numbering of the comparison)")


def test_every_cause_cell_uses_the_diagnosis_word():
    """The Cause cell says what the diagnosis, the CLI and the report say ("resolution" read
    "coarse range" there alone); underscores become spaces, nothing else is renamed."""
    from inspector.core.compare.diagnosis import CAUSES
    from inspector.core.viewdata.layer_series import CAUSE_LABELS

    for cause in CAUSES:
        if cause not in ("none", "inherited"):
            assert CAUSE_LABELS[cause] == cause.replace("_", " ").replace("weight channels", "uneven weight channels"), cause
