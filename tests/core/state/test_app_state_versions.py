"""The versions of model B live in `AppState` (typed, with current and reference) and follow the
open pair: another pair gets its own v0 and loses the old baseline; a version opened as B is
current, measured against the version it was made from; sessions keep each version's comparison."""

from __future__ import annotations

import dataclasses
import shutil

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import AppState, default_reference
from inspector.core.state.session import load_session, save_session, session_from_state
from inspector.core.state.version_sessions import restore_versions
from inspector.core.state.versions import Version
from inspector.core.tflite.model import load_model

OPTS = CompareOptions(samples=SampleSettings(count=1, seed=0), runtime="reference", threads=1)


def _copies(src, tmp_path, n: int) -> list[str]:
    out = []
    for k in range(1, n + 1):
        p = tmp_path / f"v{k}.tflite"
        shutil.copyfile(src, p)
        out.append(str(p))
    return out


def test_versions_follow_the_pair_and_the_old_baseline_goes(fixture_path, tmp_path):
    fp, qp, other = str(fixture_path("float")), str(fixture_path("int8")), str(fixture_path("int8_per_tensor"))
    s = AppState()
    events = []
    s.versions_changed.connect(lambda: events.append((len(s.versions), s.current, s.reference)))
    s.set_model("A", load_model(fp))
    assert s.versions == [] and s.current is None
    s.set_model("B", load_model(qp))
    (v0,) = s.versions
    assert (v0.name, v0.path, v0.float_path, v0.kind, s.current, s.reference) == ("v0 original int8", qp, fp, "opened", 0, None)
    assert events[-1] == (1, 0, None)
    r = compare_models(fp, qp, OPTS)
    s.set_baseline(r, "before: v0")
    s.set_model("B", load_model(other))  # another pair
    assert [v.path for v in s.versions] == [other] and s.baseline is None and s.baseline_label == ""
    s.set_model("A", None)
    assert s.versions == [] and s.current is None


def test_reference_is_the_version_it_was_made_from(fixture_path, tmp_path):
    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    s = AppState()
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    p1, p2, p3, p4 = _copies(qp, tmp_path, 4)
    s.add_version(Version(0, "v1 edit", p1, fp, "edited", source=qp))
    s.add_version(Version(0, "v2 re-calibrated", p2, fp, "recalibrated", source=p1))
    s.add_version(Version(0, "v3 requantized", p3, fp, "requantized", source=p1))
    s.add_version(Version(0, "v4 edit", p4, fp, "edited", source=p3))
    assert [v.number for v in s.versions] == [0, 1, 2, 3, 4]
    assert [default_reference(s.versions, i) for i in range(5)] == [None, 0, 1, 2, 3]
    s.set_current(4, reference=3)
    assert (s.current, s.reference) == (4, 3)
    s.set_current(0)  # v0 again: measured against nothing, not against v3
    assert (s.current, s.reference) == (0, None)
    s.set_model("B", load_model(p4))  # a version opened by hand
    assert (s.current, s.reference) == (4, 3) and len(s.versions) == 5
    s.set_current(1)
    s.set_model("B", load_model(p1))  # opened through set_current: its reference kept
    assert (s.current, s.reference) == (1, 0)


def test_sessions_keep_the_versions_comparisons(fixture_path, tmp_path):
    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    s = AppState()
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    (p1,) = _copies(qp, tmp_path, 1)
    s.add_version(Version(0, "v1 edit", p1, fp, "edited", source=qp))
    r0, r1 = compare_models(fp, qp, OPTS), compare_models(fp, p1, OPTS)
    s.set_version_comparison(0, r0)
    s.set_version_comparison(1, r1)
    path = tmp_path / "s.tqi.json"
    save_session(path, session_from_state(s))
    plans = load_session(path)["requantize_plans"]
    assert [p["comparison"]["quant"] for p in plans] == [qp, p1]
    restored, missing = restore_versions(plans, fp, p1, None)
    assert missing == [] and [v.path for v in restored] == [qp, p1]
    for got, want in zip(restored, (r0, r1), strict=True):
        assert got.comparison is not None and got.comparison.to_json() == want.to_json()
    # a comparison of another file is not taken for the version's
    plans[1]["comparison"] = plans[0]["comparison"]
    restored, _ = restore_versions(plans, fp, p1, None)
    assert restored[1].comparison is None
    assert dataclasses.replace(restored[0], comparison=None).to_json() == s.versions[0].to_json()


def test_session_parts_are_typed_and_keep_the_reference(fixture_path, tmp_path):
    from inspector.core.state.session_restore import SavedSelection, session_parts

    fp, qp = str(fixture_path("float")), str(fixture_path("int8"))
    s = AppState()
    s.set_model("A", load_model(fp))
    s.set_model("B", load_model(qp))
    p1, p2 = _copies(qp, tmp_path, 2)
    s.add_version(Version(0, "v1 edit", p1, fp, "edited", source=qp))
    s.add_version(Version(0, "v2 edit", p2, fp, "edited", source=p1))
    s.set_current(2, reference=0)  # chosen by hand: not the default (v1)
    s.set_options(OPTS)
    r2 = compare_models(fp, p2, OPTS)
    s.set_version_comparison(2, r2)
    path = tmp_path / "s.tqi.json"
    saved = session_from_state(s)
    saved["models"]["quant"] = p2  # B is v2 (the state's B file is v0 here; the paths decide)
    save_session(path, saved)
    parts = session_parts(load_session(path), fp, p2)
    assert parts.options == OPTS and parts.problems == []
    assert parts.selection == SavedSelection("B")
    assert [v.path for v in parts.versions] == [qp, p1, p2] and (parts.current, parts.reference) == (2, 0)
    assert parts.versions[2].comparison.to_json() == r2.to_json()
    damaged = load_session(path)
    damaged["results"] = {"compare": {"float": fp}}
    assert session_parts(damaged, fp, p2).problems[0].startswith("the saved comparison result is damaged")
