"""`paths.same_bytes`: the bytes compared once per version of the two files (a caller may ask
on every progress report), and a changed file compared again."""

from __future__ import annotations

import os

from inspector import paths
from inspector.paths import example_pair, is_example_pair


def test_same_bytes_reads_each_version_once(tmp_path, monkeypatch):
    f, q = example_pair()
    copy = tmp_path / "copy.tflite"
    copy.write_bytes(q.read_bytes())
    reads: list[str] = []
    real = paths._sha256.__wrapped__
    paths._sha256.cache_clear()
    paths._same_versions.cache_clear()
    monkeypatch.setattr(paths, "_sha256", lambda p, m, s: reads.append(p) or real(p, m, s))
    for _ in range(200):
        assert is_example_pair(f, copy)
    assert len(reads) == 4  # each of the two files and its reference, once
    data = bytearray(copy.read_bytes())
    data[-1] ^= 0xFF
    copy.write_bytes(bytes(data))
    st = copy.stat()
    os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # a new version even within the clock's step
    assert not is_example_pair(f, copy)
    assert not is_example_pair(f, tmp_path / "missing.tflite")
