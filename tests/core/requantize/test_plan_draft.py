"""The plan draft and the requantize workflow state, without Qt (`core.requantize.draft`,
`core.state.requantize_flow`), on the bundled example pair: its B (converter-built) starts with a
QUANTIZE that A does not have, so B's op i is A's op i - 1 and B's op 0 has no counterpart."""

from __future__ import annotations

import types

import pytest

from inspector.core.compare.pairing import pair_models
from inspector.core.requantize.draft import (
    QUANTIZER,
    SURGICAL,
    DraftRow,
    PlanDraft,
    closest_choice,
    parse_ops,
)
from inspector.core.requantize.plan import Override, Plan
from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan
from inspector.core.state.app_state import AppState
from inspector.core.state.requantize_flow import RequantizeFlow
from inspector.core.tflite.equalize_pair import refusal
from inspector.core.tflite.model import load_model


@pytest.fixture(scope="module")
def models(example_pair):
    fm, qm = load_model(example_pair[0]), load_model(example_pair[1])
    return fm, qm, pair_models(fm, qm)


@pytest.fixture
def draft(models) -> PlanDraft:
    fm, qm, pairing = models
    d = PlanDraft()
    d.set_models(fm, qm)
    d.set_maps(len(qm.main.ops), pairing.float_op_for, pairing.quant_op_for)
    return d


def _types(qm) -> list[str]:
    return [op.type for op in qm.main.ops]


def test_the_fixture_b_is_shifted_by_its_input_quantize(models):
    fm, qm, pairing = models
    assert _types(qm)[0] == "QUANTIZE" and pairing.float_op_for(0) is None
    assert _types(qm)[1:11] == [op.type for op in fm.main.ops]
    assert all(pairing.quant_op_for(a) == a + 1 for a in range(len(fm.main.ops)))


def test_add_by_a_and_by_b_makes_one_row_per_layer(draft):
    changes = []
    draft.changed.connect(lambda: changes.append(draft.rows))
    out = draft.add([1], "A", "per_channel")  # A's conv1 is B's op 2
    assert out.ops == (1,) and out.rows == (0,) and out.messages == ()
    assert draft.rows == (DraftRow(1, 2, "per_channel"),) and len(changes) == 1
    out = draft.add([2, 0], "B", "recal_mse")  # B's op 2 is that row again; B's QUANTIZE is B's alone
    assert out.rows == (0, 1) and out.messages == ()
    assert draft.rows == (DraftRow(1, 2, "recal_mse"), DraftRow(None, 0, "recal_mse"))
    assert len(changes) == 2  # one event per edit, not per op
    assert draft.a_ops() == [1] and draft.b_ops() == [2, 0]


def test_out_of_range_ops_are_left_out_with_a_message(draft, models):
    fm, qm, _ = models
    out = draft.add([3, 10, 99], "A", "keep_float")
    assert out.ops == (3,) and out.messages == (f"model A has ops 0..{len(fm.main.ops) - 1}; there is no op 10",)
    out = draft.add([12], "B", "keep_float")
    assert out.ops == () and out.messages == (f"model B has ops 0..{len(qm.main.ops) - 1}; there is no op 12",)
    assert draft.rows == (DraftRow(3, 4, "keep_float"),)


def test_an_edit_that_does_not_apply_is_said_with_the_reason(draft, models):
    _, qm, _ = models
    out = draft.add([10, 2], "B", "per_channel")  # SOFTMAX has no weights; the conv has
    assert out.messages == ("per-channel weights does not apply to op 10 of model B (SOFTMAX); choose another edit for it",)
    assert draft.applicable_kinds(0) == {"keep_float", "a16w8"}
    assert {"per_channel", "weight_mse", "bias_correct"} <= draft.applicable_kinds(1)  # type: ignore[operator]
    out = draft.add([2], "B", "equalize")  # conv1 ends in RELU6: equalize says why not
    assert out.messages == (refusal(qm, 2),) and "RELU6" in out.messages[0]
    draft.set_route(QUANTIZER)
    assert draft.applicable_kinds(0) is None  # every treatment of the quantizer route is offered


def test_b_ops_without_a_counterpart_on_the_quantizer_route(draft):
    draft.set_route(QUANTIZER)
    out = draft.add([0, 3], "B", "int8_tensor", "mse")
    assert out.messages == ("op 0 of model B has no counterpart in model A (e.g. a QUANTIZE / DEQUANTIZE)",)
    assert draft.rows == (DraftRow(2, 3, "int8_tensor", "mse"),)


def test_the_route_switch_keeps_rows_and_maps_choices(draft):
    draft.add([0], "B", "recal_p9999")
    draft.add([4], "A", "a16w8")
    draft.set_route(QUANTIZER)  # a16w8 is on both routes; a re-calibration is not: the first choice
    assert [(r.a_op, r.b_op, r.choice) for r in draft.rows] == [(None, 0, "keep_float"), (4, 5, "a16w8")]
    draft.set_choice([1], "int8_channel", "mse")
    draft.set_route(SURGICAL)
    assert [(r.choice, r.algorithm) for r in draft.rows] == [("keep_float", None), ("keep_float", "mse")]
    assert closest_choice(QUANTIZER, "equalize") == "keep_float" and closest_choice(SURGICAL, "a16w8") == "a16w8"


def test_surgical_plan_of_the_rows(draft):
    draft.add([0], "B", "recal_mse")
    draft.add([6], "A", "keep_float")  # B's op 7
    draft.add([2], "B", "bias_correct")
    plan, msgs = draft.to_plan()
    assert msgs == []
    assert plan == SurgicalPlan((Edit("recalibrate", "op:0", "mse", (0,)), Edit("keep_float", "op:7", None, (7,)),
                                 Edit("bias_correct", "op:2", None, (2,))))


def test_quantizer_plan_of_the_rows_leaves_b_only_ops_out(draft):
    draft.add([0], "B", "keep_float")  # added on the surgical route
    draft.add([8], "A", "a16w8")
    draft.set_route(QUANTIZER)
    draft.add([3], "A", "int8_tensor", "mse")
    draft.set_options(base="a16w8", per_channel=False, algorithm="octav")
    plan, msgs = draft.to_plan()
    assert msgs == ["ops of model B without a counterpart in model A are left out of a regenerated model's plan"]
    assert plan == Plan(base="a16w8", overrides=(Override("op:8", "a16w8", None, None), Override("op:3", "int8", False, "mse")),
                        per_channel=False, algorithm="octav")
    surgical, msgs = draft.to_plan(SURGICAL)  # the same rows as B's edits (the choices as they are now)
    assert [(e.kind, e.ops) for e in surgical.edits] == [("keep_float", (0,)), ("a16w8", (9,)), ("keep_float", (4,))]
    assert msgs == []  # int8 per-tensor is no edit of B: the closest one, as a route switch would


def test_a_rows_without_b_are_left_out_of_the_surgical_plan(models):
    fm, qm, _ = models
    d = PlanDraft()
    d.set_models(fm, qm)
    d.set_maps(len(qm.main.ops), lambda b: None if b == 0 else b - 1, lambda a: None if a == 9 else a + 1)
    d.add([9, 1], "A", "keep_float")
    plan, msgs = d.to_plan()
    assert plan == SurgicalPlan((Edit("keep_float", "op:2", None, (2,)),))
    assert msgs == ["op 9 of model A has no counterpart in model B; it is left out of the plan"]


def test_from_plan_round_trips_both_routes(draft, models):
    _, qm, _ = models
    surgical = SurgicalPlan((Edit("recalibrate", "op:0", "percentile:99.99", (0,)), Edit("equalize", "op:2", None, (2, 3)),
                             Edit("per_channel", "op:4", None, (4,))))
    msgs = draft.from_plan(surgical)
    assert msgs == [refusal(qm, 2)]  # said, and still listed: the plan was made elsewhere
    assert draft.route == SURGICAL and [(r.a_op, r.b_op, r.choice) for r in draft.rows] == \
        [(None, 0, "recal_p9999"), (1, 2, "equalize"), (3, 4, "per_channel")]  # a row per producer
    plan, _ = draft.to_plan()
    assert plan == SurgicalPlan((surgical.edits[0], Edit("equalize", "op:2", None, (2,)), surgical.edits[2]))  # consumer found at run
    quant = Plan(base="dynamic", overrides=(Override("op:5", "int8", True, "mse"), Override("op:7", "keep_float"),
                                            Override("conv.*", "a16w8")), per_channel=False, algorithm="mse")
    msgs = draft.from_plan(quant)
    assert msgs == ["overrides by pattern (conv.*) are not listed: the editor holds ops"]
    assert draft.route == QUANTIZER and (draft.base, draft.per_channel, draft.algorithm) == ("dynamic", False, "mse")
    plan, _ = draft.to_plan()
    assert plan == Plan(base="dynamic", overrides=quant.overrides[:2], per_channel=False, algorithm="mse")


def test_from_plan_fires_changed_once(draft):
    seen = []
    draft.changed.connect(lambda: seen.append([r.b_op for r in draft.rows]))
    draft.from_plan(SurgicalPlan((Edit("keep_float", "op:3", None, (3,)), Edit("keep_float", "op:5", None, (5,)))))
    assert seen == [[3, 5]]


def test_set_maps_refinds_b_after_b_is_renumbered(draft, models):
    fm, qm, pairing = models
    draft.add([0], "B", "recal_minmax")  # B's alone: stays as it is
    draft.add([6], "A", "keep_float")
    # another version of B with two ops inserted before A's op 6 (e.g. a DEQUANTIZE / QUANTIZE
    # around a kept-float op): A's op 6 is now B's op 9
    draft.set_maps(len(qm.main.ops) + 2, lambda b: b - 3 if b >= 9 else pairing.float_op_for(b),
                   lambda a: a + 3 if a >= 6 else pairing.quant_op_for(a))
    assert [(r.a_op, r.b_op) for r in draft.rows] == [(None, 0), (6, 9)]
    assert draft.to_plan()[0] == SurgicalPlan((Edit("recalibrate", "op:0", "minmax", (0,)), Edit("keep_float", "op:9", None, (9,))))
    draft.set_maps(0, lambda b: b, lambda a: a)  # B closed: rows name A's ops
    assert [r.b_op for r in draft.rows] == [0, 6]


def test_another_model_a_drops_the_rows(draft, models):
    fm, qm, _ = models
    draft.add([2], "A", "keep_float")
    draft.set_models(fm, None)  # B closed, A the same: rows stay
    assert len(draft.rows) == 1
    draft.set_models(load_model(fm.path), qm)  # another model A object (another signature's view...)
    assert draft.rows == ()


def test_remove_and_set_choice(draft):
    draft.add([1, 2, 3], "A", "keep_float")
    draft.remove([1, 7])
    assert draft.a_ops() == [1, 3]
    out = draft.set_choice([0, 1], "per_channel")
    assert out.rows == (0, 1) and [r.choice for r in draft.rows] == ["per_channel", "per_channel"]
    draft.clear()
    assert draft.rows == ()


def test_parse_ops():
    assert parse_ops("11, 12 op:4; 7-9") == [11, 12, 4, 7, 8, 9] and parse_ops("  ") == []
    with pytest.raises(ValueError, match="'conv2' is not an op index"):
        parse_ops("3, conv2")


# ---------------------------------------------------------------------- the workflow state
def _result(best: bool) -> types.SimpleNamespace:
    return types.SimpleNamespace(best=object() if best else None, plan=SurgicalPlan(()))


def test_app_state_holds_one_flow():
    st = AppState()
    assert isinstance(st.requantize, RequantizeFlow) and st.requantize is not AppState().requantize
    assert st.requantize.draft_changed is st.requantize.draft.changed


def test_a_suggestion_keeps_the_version_it_was_made_from():
    """The old controller kept the source version in a loose attribute that the next Suggest
    overwrote when it started: applying the still-shown result of a Suggest on v1 while a Suggest
    on v2 was running took v2 as its "before". The frozen `Suggestion` keeps v1."""
    f = RequantizeFlow()
    said = []
    f.suggestion_changed.connect(said.append)
    f.suggest_started(1, "op:9")
    r1 = _result(True)
    f.suggested(r1, "/tmp/s1.tflite")
    assert said == [r1] and (f.suggestion.source, f.suggestion.objective, f.suggestion.path) == (1, "op:9", "/tmp/s1.tflite")
    f.suggest_started(2, None)  # another Suggest starts: the shown one is still v1's
    assert (f.suggestion.result, f.suggestion.source, f.suggestion.objective) == (r1, 1, "op:9")
    f.suggestion_applied()
    assert f.suggestion.path is None and f.suggestion.result is r1
    f.suggested(_result(False), "/tmp/s2.tflite")  # nothing found: nothing to apply
    assert (f.suggestion.source, f.suggestion.path) == (2, None)


def test_a_run_completes_once_its_version_is_compared():
    f = RequantizeFlow()
    pend = []
    f.pending_changed.connect(pend.append)
    f.await_version(3)
    assert not f.compared(2) and f.pending == 3
    assert f.compared(3) and f.pending is None and not f.compared(3)
    assert pend == [3, None]


def test_another_pair_drops_the_suggestion_and_the_awaited_run():
    f = RequantizeFlow()
    said = []
    f.suggestion_changed.connect(said.append)
    assert f.pair_moved(("a.tflite", "b.tflite")) == (None, [])
    f.versions_made(("a.tflite", "b.tflite"), ["v1.tflite"])
    f.versions_made(("other.tflite", "b.tflite"), ["x.tflite"])  # not the pair shown: ignored
    f.suggested(_result(True), "/tmp/s.tflite")
    f.await_version(1)
    assert f.pair_moved(("a.tflite", "b.tflite")) is None and f.pending == 1  # the same pair: kept
    assert f.pair_moved(("a2.tflite", "b.tflite")) == (("a.tflite", "b.tflite"), ["v1.tflite"])
    assert f.suggestion is None and f.pending is None and f.made == [] and said[-1] is None
