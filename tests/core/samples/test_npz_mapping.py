"""Issue 34 §5: an .npz array whose name is not its input's was used silently. The source's
description (the compare line, --json "inputs", the report) says which array feeds which input;
several arrays that could feed one input, none named after it, are refused as ambiguous."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.errors import InputError
from inspector.core.samples.arrays import array_source
from inspector.core.tflite.model import load_model
from inspector.paths import example_inputs, example_pair

INPUT = "serving_default_image:0"  # the bundled float model's input tensor (signature name 'image')


@pytest.fixture(scope="module")
def digits() -> dict[str, np.ndarray]:
    with np.load(example_inputs()) as z:
        return {k: z[k][:6] for k in z.files}


def _source(tmp_path: Path, **arrays):
    path = tmp_path / "in.npz"
    np.savez(path, **arrays)
    return array_source(load_model(example_pair()[0]), path, None)


def test_an_array_named_otherwise_is_said_to_feed_the_input(digits, tmp_path):
    src = _source(tmp_path, pixels=digits["image"], labels=digits["labels"])
    assert src.description == f"6 samples from in.npz (array 'pixels' feeds input '{INPUT}')"
    got = np.concatenate([s.inputs[0] for s in src])
    np.testing.assert_array_equal(got, digits["image"].astype(np.float32))
    # named after the input (signature name or tensor name): nothing to say
    assert _source(tmp_path, image=digits["image"]).description == "6 samples from in.npz"
    numbered = _source(tmp_path, **{f"sample_{i}": digits["image"][i] for i in range(3)})
    assert numbered.description == f"3 samples from in.npz (arrays sample_0 … sample_2 (3, one per sample) feed input '{INPUT}')"


def test_two_arrays_that_could_feed_the_input_are_refused(digits, tmp_path):
    with pytest.raises(InputError, match=r"ambiguous: 2 arrays \('a', 'b'\) and none named 'serving_default_image:0' or 'image'"):
        _source(tmp_path, a=digits["image"], b=digits["image"], labels=digits["labels"])


def test_cli_compare_says_which_array_feeds_which_input(digits, tmp_path, capsys):
    path = tmp_path / "pixels.npz"
    np.savez(path, pixels=digits["image"], labels=digits["labels"])
    f, q = (str(p) for p in example_pair())
    out = tmp_path / "c.json"
    assert main(["compare", f, q, "--inputs", str(path), "--no-isolated", "--json", str(out)]) == 0
    said = f"(array 'pixels' feeds input '{INPUT}')"
    assert said in capsys.readouterr().out and said in json.loads(out.read_text())["inputs"]


def test_requantize_suggest_and_extract_say_it_too(digits, tmp_path, capsys):
    """They print no source line of their own: the mapping is one stderr line (before: silent)."""
    path = tmp_path / "pixels.npz"
    np.savez(path, pixels=digits["image"], labels=digits["labels"])
    f, q = (str(p) for p in example_pair())
    said = f"(array 'pixels' feeds input '{INPUT}')"
    runs = {
        "requantize": ["requantize", f, q, "--recalibrate", "op:1", "--inputs", str(path), "--out", str(tmp_path / "r.tflite")],
        "suggest": ["suggest", f, q, "--inputs", str(path), "--target-sqnr", "20", "--max-float-layers", "1"],
        "extract": ["extract", q, "--op", "2", "--inputs", str(path), "--out", str(tmp_path / "x")],
    }
    for command, argv in runs.items():
        assert main(argv) == 0, command
        err = capsys.readouterr().err
        assert f"{command}: inputs: 6 samples from pixels.npz {said}" in err, (command, err)
    np.savez(path, image=digits["image"], labels=digits["labels"])  # named after its input: nothing to say
    assert main(runs["extract"][:-1] + [str(tmp_path / "y")]) == 0
    assert "feeds input" not in capsys.readouterr().err
