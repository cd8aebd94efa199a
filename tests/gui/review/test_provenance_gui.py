"""The report of an edited version names where it comes from (issue 26 §12): exported while model
B is a version made here, its JSON and HTML name the version, the original model B, the plan's
edits and ops and the samples, not only a file in the versions cache.

Fixture: the confident classifier (`verdict_fixtures`); the edit is the diagnosis' Apply-fix
plan (`fix_plan`) of a re-calibration of one op, run by the requantize controller as Apply fix does.
"""

from __future__ import annotations

import json
from pathlib import Path

from inspector.core.compare.diagnosis_types import Fix
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.tflite.model import load_model
from tests.helpers import verdict_fixtures as vf
from tests.helpers.gui_helpers import open_wait, use_random_samples
from tests.helpers.paths import REPO

RUN_MS = 120_000


def test_report_of_an_edited_version_names_its_provenance(qtbot, window, tmp_path):
    paths = vf.confident(REPO / ".fixture-cache")
    fa, fb = str(paths["conf_float"]), str(paths["conf_int8"])
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    use_random_samples(window)
    window.features.compare_features.inputs.count.setValue(4)
    op = next(o.index for o in load_model(fb).main.ops if o.type == "FULLY_CONNECTED" and o.index > 1)
    rq = window.features.requantize
    with qtbot.waitSignal(rq.finished, timeout=RUN_MS):
        rq.run(fix_plan(Fix("recalibrate", (op,))))
    qtbot.waitUntil(lambda: len(rq.versions) == 2 and window.controller.models["B"].path == rq.versions[1].path, timeout=RUN_MS)
    v1 = rq.versions[1]
    out = tmp_path / "out"
    out.mkdir()
    ex = window.features.review.exporter
    with qtbot.waitSignal(ex.exported, timeout=RUN_MS):
        ex.export(out, "edited", ["html", "json"])
    rep = json.loads((out / "edited.json").read_text())
    prov = rep["provenance"]
    assert prov["version"] == v1.name and prov["number"] == 1 and prov["kind"] == "edited"
    assert Path(prov["original_b"]).resolve() == Path(fb).resolve() and Path(prov["made_from"]).resolve() == Path(fb).resolve()
    assert [{k: e[k] for k in ("edit", "ops")} for e in prov["edits"]] == [{"edit": "recalibrate", "ops": [op]}] and prov["route"] == "surgical"
    assert prov["samples"]["random"] is True and "4 random samples" in prov["samples"]["description"]
    assert [c["version"] for c in prov["chain"]] == [rq.versions[0].name, v1.name]
    assert Path(rep["models"]["quant"]["path"]).resolve() == Path(v1.path).resolve()
    html = (out / "edited.html").read_text()
    assert "Provenance of this model B" in html and fb in html and f"recalibrate on ops {op}" in html
    assert "4 random samples" in html and v1.name in html
