"""Versions made for a pair survive another pair being opened (issue 35, item 5): `AppState`
shelves them and gives them back when their pair is reopened, and a session keeps the shelf."""

from __future__ import annotations

import shutil

from inspector.core.state.app_state import AppState, same_file
from inspector.core.state.session import load_session, save_session, session_from_state
from inspector.core.state.version_sessions import restore_shelf
from inspector.core.state.versions import Version
from inspector.core.tflite.model import load_model
from inspector.paths import example_pair


def test_versions_are_shelved_with_their_pair_and_kept_by_a_session(tmp_path, fixture_path):
    fa, fb = (str(p) for p in example_pair())
    v1 = str(tmp_path / "v1_edit.tflite")
    shutil.copyfile(fb, v1)
    st = AppState()
    st.set_model("A", load_model(fa))
    st.set_model("B", load_model(fb))
    st.add_version(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    st.set_current(1)
    st.set_model("B", load_model(v1))
    assert [v.name for v in st.versions][1] == "v1 edit" and st.current == 1

    st.set_model("A", load_model(str(fixture_path("float"))))  # another pair: its own v0
    assert len(st.versions) == 1 and len(st.shelved) == 1

    path = tmp_path / "s.tqi.json"
    save_session(path, session_from_state(st))
    other = AppState()
    assert restore_shelf(other, load_session(path).get("shelved_versions")) == 1
    vs, cur, _ref = other.shelved[0]
    assert [v.name for v in vs][1] == "v1 edit" and same_file(vs[cur].path, v1)

    st.set_model("A", load_model(fa))  # the pair again (B is v1): its versions, v1 model B
    assert [v.name for v in st.versions][1] == "v1 edit" and st.current == 1 and not st.shelved
