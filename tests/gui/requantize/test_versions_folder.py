"""Requantized versions live under the user cache (they must outlive a reboot for sessions and
crash recovery) and folders untouched for a month are pruned when a new one is made."""

from __future__ import annotations

import os
import time

from inspector import paths


def test_versions_folder_under_cache_and_old_ones_pruned(tmp_path, monkeypatch):
    monkeypatch.setattr(paths.sys, "platform", "linux")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    root = tmp_path / "tflite-inspector" / "versions"
    old, recent, fresh_file = (root / n for n in ("tqi-versions-old", "tqi-versions-recent", "tqi-versions-touched"))
    for d in (old, recent, fresh_file):
        d.mkdir(parents=True)
        (d / "v1.tflite").write_bytes(b"x")
    month = time.time() - 31 * 86400
    for p in (old, old / "v1.tflite", fresh_file):
        os.utime(p, (month, month))  # fresh_file's folder is old but holds a file written today
    other = root / "not-ours"
    other.mkdir()
    os.utime(other, (month, month))

    new = paths.new_versions_folder()
    assert new.parent == root and new.name.startswith("tqi-versions-") and new.is_dir()
    assert not old.exists()
    assert recent.exists() and fresh_file.exists() and other.exists()
