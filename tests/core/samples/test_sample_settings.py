"""One SampleSettings: one default count, one validation, one meaning of "all", one set of CLI flags."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions
from inspector.core.errors import InputError
from inspector.core.samples.settings import ALL, DEFAULT_COUNT, SampleSettings
from inspector.core.samples.sources import open_source
from inspector.core.tflite.model import load_model

ROOT = Path(__file__).resolve().parents[3]


def test_the_default_count_is_written_once():
    hits = subprocess.run(
        ["grep", "-rnE", r"= 8\b|samples=8|8 if|default=8", "inspector"], cwd=ROOT, capture_output=True, text=True
    ).stdout.splitlines()
    sample_hits = [h for h in hits if re.search(r"sample|count", h, re.I)]
    assert [h.split(":")[0] for h in sample_hits] == ["inspector/core/samples/settings.py"], sample_hits
    assert DEFAULT_COUNT == 8 and SampleSettings().count == 8


@pytest.mark.parametrize("bad", [0, -3, 2.5, True])
def test_one_validation(bad):
    with pytest.raises(InputError, match="at least 1"):
        SampleSettings(count=bad)


def test_all_means_every_sample_of_the_file_and_the_default_for_random(fixture_path, tmp_path):
    fm, qm = load_model(fixture_path("float")), load_model(fixture_path("int8"))
    assert len(open_source(fm, qm, SampleSettings(count=ALL))) == DEFAULT_COUNT
    x = np.random.default_rng(0).uniform(-1, 1, (11, *fm.main.tensors[fm.main.inputs[0]].shape[1:])).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert len(open_source(fm, qm, SampleSettings(count=ALL, source=str(tmp_path / "x.npy")))) == 11
    assert len(open_source(fm, qm, SampleSettings(count=4, source=str(tmp_path / "x.npy")))) == 4


def test_json_round_trip_and_older_forms():
    s = SampleSettings(count=ALL, seed=5, source="/data/x.npz", normalization="0,1")
    assert SampleSettings.from_json(s.to_json()) == s
    # the flat CompareOptions keys sessions of schema 2 saved; 0 was the GUI's "all"
    old = {"samples": 0, "seed": 3, "inputs": "/d/imgs", "normalization": "-1,1", "runtime": "reference"}
    o = CompareOptions.from_json(old)
    assert o.samples == SampleSettings(ALL, 3, "/d/imgs", "-1,1") and o.runtime == "reference"
    assert CompareOptions.from_json(o.to_json()) == o
    # schema-1 sessions, migrated
    assert SampleSettings.from_json({"source": "npz", "path": "/d/x.npz", "count": 6}) == SampleSettings(6, 0, "/d/x.npz")
