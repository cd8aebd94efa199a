"""File > Export report: the four files from the GUI's current comparison, self-contained HTML,
defaults from QSettings / next to the models, no comparison -> HTML + JSON only, errors shown."""

from __future__ import annotations

import csv
import hashlib
import json
from html.parser import HTMLParser
from pathlib import Path

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.review.audit import audit_model
from inspector.core.review.report_html import SECTIONS
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import Model
from tests.helpers.gui_helpers import open_wait

WAIT_MS = 60_000


class _Doc(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.tags: list[str] = []
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        self.urls += [v for k, v in attrs if k in ("src", "href", "xlink:href", "data", "action", "poster")]


def _sha(p: Path) -> str:
    return hashlib.sha256(Path(p).read_bytes()).hexdigest()


def _export(qtbot, window, folder, base, kinds=None):
    ex = window.features.review.exporter
    with qtbot.waitSignal(ex.exported, timeout=WAIT_MS) as sig:
        ex.export(folder, base) if kinds is None else ex.export(folder, base, kinds)
    return sig.args[0]


def test_export_four_files_with_comparison(qtbot, window, fixture_path, tmp_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    before = (_sha(fp), _sha(qp))
    open_wait(qtbot, window, "A", fp)
    open_wait(qtbot, window, "B", qp)
    result = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))
    window.features.compare_features.source.set_result(result)
    out = tmp_path / "out"
    out.mkdir()
    written = _export(qtbot, window, out, "review")
    names = sorted(Path(p).name for p in written)
    assert names == ["review.csv", "review.html", "review.json", "review.model-explorer.json"]
    assert sorted(p.name for p in out.iterdir()) == names  # no temp files left behind

    html = (out / "review.html").read_text()
    doc = _Doc()
    doc.feed(html)
    assert {sid for sid, _ in SECTIONS} <= doc.ids
    assert "script" not in doc.tags and "link" not in doc.tags and "iframe" not in doc.tags
    assert all(u.startswith(("#", "data:")) for u in doc.urls), doc.urls
    assert "https://" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert doc.tags.count("svg") >= 2  # layer plot + weight histograms, inline

    report = json.loads((out / "review.json").read_text())
    assert report["comparison"]["layers"] == json.loads(json.dumps(result.to_json()["layers"]))
    findings = audit_model(Model(qp), result)
    assert len(report["audit"]["findings"]) == len(findings)
    assert [f["rule"] for f in report["audit"]["findings"]] == [f.rule for f in findings]
    rows = list(csv.DictReader((out / "review.csv").open()))
    assert len(rows) >= len(result.layers)
    assert [int(r["op_index"]) for r in rows[: len(result.layers)]] == [lay.op_index for lay in result.layers]
    me = json.loads((out / "review.model-explorer.json").read_text())
    assert me  # node data overlay (format checked in tests/core/review/test_report.py)
    assert (_sha(fp), _sha(qp)) == before  # input models untouched
    assert window.settings.value("export/last_dir") == str(out)
    assert "review.html" in window.statusBar().currentMessage()


def test_dialog_defaults_and_no_comparison(qtbot, window, fixture_path, tmp_path, monkeypatch):
    qp = fixture_path("int8")
    open_wait(qtbot, window, "A", fixture_path("float"))
    open_wait(qtbot, window, "B", qp)
    ex = window.features.review.exporter
    d = ex.show_dialog()
    qtbot.addWidget(d)
    assert d.folder.text() == str(Path(qp).resolve().parent) and d.base.text() == "int8-report"
    assert not d.checks["csv"].isEnabled() and not d.checks["model_explorer"].isEnabled()  # no comparison yet
    assert d.kinds() == ["html", "json"]
    d.folder.setText(str(tmp_path))
    d.base.setText("solo")
    with qtbot.waitSignal(ex.exported, timeout=WAIT_MS) as sig:
        d.accept()
    assert sorted(Path(p).name for p in sig.args[0]) == ["solo.html", "solo.json"]
    report = json.loads((tmp_path / "solo.json").read_text())
    assert report["comparison"] is None and report["models"]["quant"]["file"] == "int8.tflite"
    # The next dialog starts in the last export folder (QSettings).
    d2 = ex.show_dialog()
    qtbot.addWidget(d2)
    assert d2.folder.text() == str(tmp_path)


def test_export_error_is_shown(qtbot, window, fixture_path, tmp_path):
    open_wait(qtbot, window, "B", fixture_path("int8"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    ex = window.features.review.exporter
    with qtbot.waitSignal(ex.failed, timeout=WAIT_MS) as sig:
        ex.export(blocker / "sub", "r")  # a folder below a regular file cannot exist
    assert window.banner.isVisible() and "Export failed" in window.banner.text
    assert sig.args[0] in window.banner.text
