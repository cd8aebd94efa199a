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
