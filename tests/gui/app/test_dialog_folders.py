"""Save, export and session dialogs start in the user's last folder or home, never inside the
app's resources (where the bundled example pair lives)."""

from __future__ import annotations

from pathlib import Path

from inspector.core.state.session import SUFFIX
from inspector.paths import example_pair, resources_dir
from tests.helpers.gui_helpers import open_wait


def test_dialogs_never_start_in_resources(qtbot, window, tmp_path, monkeypatch, fixture_path):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    fa, fb = example_pair()
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    recent = window.recent
    assert Path(recent.last_dir).resolve() == resources_dir() / "examples"  # the open dialog may start there
    assert recent.save_dir == str(home)
    assert window.features.review.exporter.default_folder() == str(home)
    assert Path(window.features.session.save_start()) == home / f"session{SUFFIX}"
    # A session saved (through the dialog) moves the save folder there.
    out = tmp_path / "mine"
    out.mkdir()
    monkeypatch.setattr("inspector.gui.session.feature.QFileDialog.getSaveFileName",
                        lambda *a, **k: (str(out / "s.tqi.json"), ""))  # fmt: skip
    window.features.session.choose_save()
    assert (out / "s.tqi.json").is_file()
    assert recent.save_dir == str(out)
    assert window.features.review.exporter.default_folder() == str(out)
    # Models opened from the user's own folder: their folder is the default.
    open_wait(qtbot, window, "B", fixture_path("int8"))
    window.settings.remove("last_save_dir")
    assert recent.save_dir == str(Path(fixture_path("int8")).resolve().parent)
    # An export folder remembered inside resources (an older version's default) is not reused.
    window.settings.setValue("export/last_dir", str(resources_dir() / "examples"))
    assert window.features.review.exporter.default_folder() == recent.save_dir


def test_save_model_as_never_starts_in_the_versions_cache(qtbot, window, tmp_path, monkeypatch, fixture_path):
    """Issue 19 §2: with the shown version in the auto-purged versions cache (the last model
    folder), "Save model as…" starts in the folder of the model B the user opened, or the last
    folder saved into."""
    fa, fb = fixture_path("float"), fixture_path("int8")
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    cache = tmp_path / "cache" / "tqi-versions-abc123"
    cache.mkdir(parents=True)
    window.settings.setValue("last_dir", str(cache))  # as after switching to a version in the cache
    window.settings.remove("last_save_dir")
    starts = []
    monkeypatch.setattr("inspector.gui.requantize.feature.QFileDialog.getSaveFileName",
                        lambda _w, _t, start, _f: (starts.append(start), ("", ""))[1])  # fmt: skip
    window.features.requantize_panel.save_model_button.click()
    assert Path(starts[-1]).parent.resolve() == Path(fb).resolve().parent, starts
    mine = tmp_path / "mine"
    mine.mkdir()
    window.recent.remember_save_dir(mine / "x.tflite")
    window.features.requantize_panel.save_model_button.click()
    assert Path(starts[-1]).parent == mine
    window.settings.setValue("last_save_dir", str(cache))  # an old default inside the cache: not reused
    window.features.requantize_panel.save_model_button.click()
    assert Path(starts[-1]).parent.resolve() == Path(fb).resolve().parent
