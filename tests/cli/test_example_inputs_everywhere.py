"""The bundled example pair's inputs wherever a command runs samples on it without --inputs
(issue 19 §3): suggest (it ran on random samples) and compare given the models the wrong way round
(swapped back, then run on random samples)."""

from __future__ import annotations

import numpy as np

from inspector.cli import main
from inspector.core.samples.holdout import split_samples
from inspector.paths import example_inputs

LOGITS_OP = 9  # FULLY_CONNECTED logits of the bundled int8 model


def test_cli_suggest_uses_the_examples_inputs(example_pair, capsys):
    """As compare and report: the bundled pair without --inputs runs on its bundled inputs (it
    ran on 8 random samples)."""
    f, q = (str(p) for p in example_pair)
    main(["suggest", f, q, "--objective", f"op:{LOGITS_OP}", "--target-sqnr", "40", "--max-float-layers", "1"])
    captured = capsys.readouterr()
    assert "suggest: the bundled example pair: used its inputs and labels" in captured.err
    # every bundled input was read: the calibration / held-out split is that of all of them (the
    # example's suggest finds no edit of the logits, so there is no reproduce line to read)
    split = split_samples(len(np.load(example_inputs())["labels"]))
    assert split.evaluation == "held-out" and split.note in captured.out


def test_cli_compare_of_the_example_given_the_wrong_way_round_uses_its_inputs(example_pair, tmp_path, capsys):
    """compare INT8 FLOAT swaps the models back; it then ran the example pair on random samples."""
    import json

    f, q = (str(p) for p in example_pair)
    out = tmp_path / "c.json"
    assert main(["compare", q, f, "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["samples_are_random"] is False and "example_inputs.npz" in str(d.get("inputs"))
    assert "the bundled example pair: used its inputs" in capsys.readouterr().err


def test_cli_requantize_the_readme_fix_gains_what_the_gui_gains(example_pair, tmp_path, capsys):
    """The README's fix from the command line (re-calibrate op 1 of the bundled pair) calibrated on
    8 random samples and gained +0.00 dB in-sample; on the bundled inputs: +18.64 dB on the 64
    held-out digits (9.62 -> 28.27 dB), what Apply fix gains in the GUI."""
    f, q = (str(p) for p in example_pair)
    out = tmp_path / "fixed.tflite"
    assert main(["requantize", f, q, "--out", str(out), "--recalibrate", "op:1"]) == 0
    captured = capsys.readouterr()
    gain = next(line for line in captured.out.splitlines() if line.startswith("gain:"))
    assert "9.62 dB → 28.27 dB (+18.64 dB) on the 64 held-out samples" in gain, gain
    assert "requantize: the bundled example pair: used its inputs and labels" in captured.err
    assert "random samples" not in captured.err


def test_cli_compare_runtimes_and_extract_use_the_examples_inputs(example_pair, tmp_path, capsys):
    import json

    n = len(np.load(example_inputs())["labels"])
    q = str(example_pair[1])
    assert main(["compare-runtimes", q, "--json", str(tmp_path / "p.json")]) == 0
    d = json.loads((tmp_path / "p.json").read_text())
    assert d["samples"] == n and "example_inputs.npz" in d["inputs"]  # was 8 random samples
    assert "compare-runtimes: the bundled example pair: used its inputs" in capsys.readouterr().err
    assert main(["extract", q, "--op", "2", "--out", str(tmp_path / "x")]) == 0
    assert json.loads((tmp_path / "x" / "extract.json").read_text())["samples"] == n
    with np.load(tmp_path / "x" / "inputs.npz") as z:
        assert all(len(z[k]) == n for k in z.files)  # one captured input per bundled sample
    assert "extract: the bundled example pair: used its inputs" in capsys.readouterr().err
