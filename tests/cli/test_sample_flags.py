"""One set of sample flags (cli/sample_flags.py) on every subcommand that runs samples."""

from __future__ import annotations

import pytest

from inspector.cli import build_parser, main
from inspector.cli.sample_flags import sample_settings
from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings


@pytest.mark.parametrize("command", ["compare", "report", "requantize", "suggest", "graph"])
def test_every_sample_command_has_the_same_flags(command):
    extra = {"compare": ["F", "Q"], "report": ["F", "Q"], "requantize": ["F", "--out", "o.tflite"], "suggest": ["F", "Q"],
             "graph": ["F", "Q", "--svg", "g.svg"]}  # fmt: skip
    args = build_parser().parse_args([command, *extra[command], "--inputs", "imgs", "--seed", "4", "--normalization", "0,1"])
    assert sample_settings(args) == SampleSettings(count=ALL, seed=4, source="imgs", normalization="0,1")
    args = build_parser().parse_args([command, *extra[command], "--samples", "3"])
    assert sample_settings(args) == SampleSettings(count=3, seed=0)
    assert sample_settings(build_parser().parse_args([command, *extra[command]])).random_count == DEFAULT_COUNT


@pytest.mark.parametrize("command", ["compare", "report", "requantize", "suggest", "graph"])
def test_samples_below_one_is_bad_input(command, capsys, tmp_path):
    extra = {"compare": ["F", "Q"], "report": ["F", "Q", "--html", str(tmp_path / "r.html")],
             "requantize": ["F", "--out", str(tmp_path / "o.tflite")], "suggest": ["F", "Q", "--target-sqnr", "30"],
             "graph": ["F", "Q", "--svg", str(tmp_path / "g.svg")]}  # fmt: skip
    assert main([command, *extra[command], "--samples", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--samples must be at least 1, got 0" in err[0]
