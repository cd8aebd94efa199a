"""Surgical plans write their samples as sessions do (one `SampleSettings.to_json()` shape), and
plan files written before (flat `samples` count, `seed`, `inputs`, `normalization`) still open."""

from __future__ import annotations

import json

from inspector.core.compare.comparison import CompareOptions
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.samples.settings import SampleSettings


def test_plan_samples_have_the_session_shape():
    settings = SampleSettings(count=5, seed=3, source="/data/calib.npz", normalization="0,1")
    plan = SurgicalPlan((Edit("bias_correct", "op:2", ops=(2,)),), settings)
    d = json.loads(json.dumps(plan.to_json()))
    assert d["samples"] == CompareOptions(samples=settings).to_json()["samples"]  # what a session saves
    assert SurgicalPlan.from_json(d).samples == settings


def test_version_1_plans_still_open():
    old = {"version": 1, "route": "surgical", "edits": [{"kind": "per_channel", "pattern": "op:2", "ops": [2]}],
           "samples": 3, "seed": 4, "inputs": "/data/x.npy", "normalization": None,
           "float_sha256": None, "quant_sha256": None, "signature": None}  # fmt: skip
    plan = SurgicalPlan.from_json(old)
    assert plan.samples == SampleSettings(count=3, seed=4, source="/data/x.npy")
    assert plan.edits[0].ops == (2,)
