"""A model with a dangling metadata_buffer entry (the LiteRT interpreter runs it) opens in the
app, and the Audit tab shows the inconsistency as a warning (issue 18 §4)."""

from __future__ import annotations

from tests.core.tflite.test_dangling_references import _dangling, _edit, _references
from tests.helpers.gui_helpers import open_wait


def test_dangling_metadata_buffer_opens_with_an_audit_warning(qtbot, window, fixture_path, tmp_path):
    bad = _edit(fixture_path("int8"), tmp_path / "dangling.tflite", _dangling)
    n, mb, _ = _references(bad)
    assert mb == [n]
    open_wait(qtbot, window, "B", bad)
    assert window.controller.models["B"] is not None
    findings = [f for f in window.features.review.audit_view.visible_findings() if f.rule == "dangling-reference"]
    assert len(findings) == 1 and findings[0].severity == "warning"
    assert f"names buffer {n}, but the model has {n} buffers" in findings[0].message
