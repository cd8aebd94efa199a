"""`tflite-inspector report`: files written, gates, exit codes."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from tests.helpers.audit_fixtures import planted


def test_report_cli_end_to_end_and_gate(fixture_path, tmp_path, capsys):
    f = fixture_path("float")
    # violations the runtime accepts silently, so the comparison runs too
    data, _ = planted(fixture_path("int8"), ["bias_scale", "weight_minus_128"])
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(data)
    out = {k: tmp_path / f"r.{k}" for k in ("html", "json", "csv", "me")}
    rc = main(["report", str(f), str(bad), "--samples", "2", "--html", str(out["html"]), "--json", str(out["json"]),
               "--csv", str(out["csv"]), "--model-explorer", str(out["me"]), "--fail-on", "error"])  # fmt: skip
    err = capsys.readouterr().err
    assert rc == 1
    assert "FAIL: 2 finding(s)" in err and "[bias-scale] op 3 CONV_2D" in err and "[weight-range] op 11 FULLY_CONNECTED" in err
    rep = json.loads(out["json"].read_text())
    assert rep["comparison"]["samples"] == 2 and rep["audit"]["counts"]["error"] == 2
    assert out["csv"].read_text().count("\n") == len(rep["comparison"]["layers"]) + 1
    assert "main" in json.loads(out["me"].read_text())
    assert "<section id=\"audit\">" in out["html"].read_text()
    # a clean model passes the error gate
    assert main(["report", str(f), str(fixture_path("int8")), "--samples", "2", "--fail-on", "error"]) == 0


def test_report_when_runtime_refuses_the_model(fixture_path, tmp_path, capsys):
    data, _ = planted(fixture_path("int8"), ["weight_zero_point"])  # CONV_2D refuses weight zero-point 3
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(data)
    js = tmp_path / "r.json"
    args = ["report", str(fixture_path("float")), str(bad), "--samples", "1", "--json", str(js), "--html", str(tmp_path / "r.html")]
    assert main(args + ["--fail-on", "error"]) == 1  # the gate still works: the audit says why
    err = capsys.readouterr().err
    assert "comparison not run" in err and "[weight-zero-point] op 1 CONV_2D" in err
    rep = json.loads(js.read_text())
    assert rep["comparison"] is None and "CONV_2D" in rep["comparison_error"]
    assert "could not run" in (tmp_path / "r.html").read_text()
    assert main(args) == 2  # without a gate: bad input


@pytest.mark.parametrize("args, needle", [
    (["report", "/nonexistent/model.tflite", "--html", "x.html"], "/nonexistent/model.tflite"),
    (["report", "{int8}", "--csv", "x.csv"], "need both FLOAT and QUANT"),
    (["report", "{int8}"], "nothing to do"),
    (["report", "{int8}", "--json", "{int8}"], "refusing to overwrite an input model"),
])  # fmt: skip
def test_report_cli_bad_input(fixture_path, capsys, tmp_path, monkeypatch, args, needle):
    monkeypatch.chdir(tmp_path)
    args = [a.replace("{int8}", str(fixture_path("int8"))) for a in args]
    before = fixture_path("int8").read_bytes()
    assert main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0]
    assert fixture_path("int8").read_bytes() == before
