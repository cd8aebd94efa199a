"""A surgical plan is saved through the same input guard as models and recipes."""

from __future__ import annotations

import json

import pytest

from inspector.core.errors import InputError
from inspector.core.requantize.quantizer_route import save_plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan


def test_a_plan_is_written_and_never_over_an_input(tmp_path):
    plan = SurgicalPlan((Edit("recalibrate", "op:1", None, (1,)),))
    model = tmp_path / "b.tflite"
    model.write_bytes(b"model B")
    out = tmp_path / "plan.json"
    save_plan(plan, out, protect=[model])
    assert json.loads(out.read_text()) == json.loads(json.dumps(plan.to_json()))
    link = tmp_path / "other-name.tflite"
    link.symlink_to(model)  # the same file by another path
    for target in (model, link):
        with pytest.raises(InputError, match="refusing to overwrite an input file with the plan"):
            save_plan(plan, target, protect=[model])
    assert model.read_bytes() == b"model B"
