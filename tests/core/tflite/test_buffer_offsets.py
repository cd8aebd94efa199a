"""Models written with buffer offsets (weights after the flatbuffer, the > 2 GB layout), built by
the TF converter with `_experimental_use_buffer_offset`: they open, compare and requantize, and
the exposing copy written to a file for big models (`expose_file`) keeps every weight."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.runtime import runner as runner_mod
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.expose_file import data_start, expose_to_file
from inspector.core.tflite.model import load_model
from inspector.core.tflite.rewrite import exposed_outputs
from tests.helpers.reference import preserving_interpreter as _interpreter
from tests.helpers.shape_fixtures import cache_path

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".fixture-cache"


@pytest.fixture(scope="module")
def pair() -> tuple[Path, Path]:
    return cache_path(CACHE, "offset_float"), cache_path(CACHE, "offset_int8")


def _buffers(data: bytes) -> list[tuple[int, int, bytes]]:
    """(offset, size, bytes) of every buffer stored after the flatbuffer: LiteRT's own schema."""
    from ai_edge_litert import schema_py_generated as schema

    m = schema.Model.GetRootAs(data, 0)
    out = []
    for i in range(m.BuffersLength()):
        b = m.Buffers(i)
        if b.Offset() > 1:
            out.append((b.Offset(), b.Size(), data[b.Offset() : b.Offset() + b.Size()]))
    return out


def test_weights_read_from_after_the_flatbuffer(pair):
    fpath, _ = pair
    data = fpath.read_bytes()
    stored = _buffers(data)
    assert len(stored) >= 3  # the converter really wrote offsets
    m = load_model(fpath)
    it = _interpreter(fpath)
    checked = 0
    for t in m.main.tensors:
        if t.is_constant and t.dtype == "float32":
            np.testing.assert_array_equal(m.tensor_data(t), it.get_tensor(t.index))
            checked += 1
    assert checked >= 3
    assert data_start(str(fpath))[0] == min(o for o, _, _ in stored)


def test_exposing_copy_in_a_file_keeps_every_weight(pair, tmp_path):
    fpath, _ = pair
    outs = exposed_outputs(str(fpath), 0)
    tmp = expose_to_file(str(fpath), 0, outs, folder=str(tmp_path))
    new = Path(tmp).read_bytes()
    old_bufs, new_bufs = _buffers(fpath.read_bytes()), _buffers(new)
    assert [b[2] for b in new_bufs] == [b[2] for b in old_bufs]  # same data at the moved offsets
    assert all(n[0] % 16 == o[0] % 16 and n[0] > o[0] for n, o in zip(new_bufs, old_bufs, strict=True))
    from ai_edge_litert import schema_py_generated as schema

    sg = schema.Model.GetRootAs(new, 0).Subgraphs(0)
    assert tuple(sg.OutputsAsNumpy()) == outs


def test_compares_and_the_file_route_agrees(pair, monkeypatch):
    fpath, qpath = pair
    opts = CompareOptions(samples=SampleSettings(count=3), runtime="reference")
    a = compare_models(str(fpath), str(qpath), opts)
    monkeypatch.setattr(runner_mod, "CACHE_MAX_BYTES", 0)  # every model takes the big-model route
    b = compare_models(str(fpath), str(qpath), opts)
    assert len(a.layers) == 3
    assert [x.metrics.mse for x in a.layers] == [x.metrics.mse for x in b.layers]
    assert [x.metrics.sqnr_db for x in a.outputs] == [x.metrics.sqnr_db for x in b.outputs]
    assert np.isfinite(a.outputs[0].metrics.sqnr_db) and a.outputs[0].metrics.sqnr_db > 20


def test_requantizes(pair, tmp_path):
    fpath, _ = pair
    out = tmp_path / "int8.tflite"
    p = subprocess.run([sys.executable, "-m", "inspector", "requantize", str(fpath), "--out", str(out), "--samples", "4"],
                       capture_output=True, text=True, cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert p.returncode == 0, p.stderr
    f, q = load_model(fpath), load_model(out)
    fw = {t.name: f.tensor_data(t) for t in f.main.tensors if t.is_constant and len(t.shape) == 2}
    checked = 0
    for t in q.main.tensors:  # int8 weights dequantize to the float weights within half a step
        if t.is_constant and t.dtype == "int8" and len(t.shape) == 2:
            w = next(v for v in fw.values() if v.shape == t.shape)
            s = np.asarray(t.quantization.scales)[:, None]
            assert np.max(np.abs(q.tensor_data(t) * s - w) / s) <= 0.5 + 1e-3
            checked += 1
    assert checked == 3
    r = compare_models(str(fpath), str(out), CompareOptions(samples=SampleSettings(count=2)))
    assert r.outputs[0].metrics.sqnr_db > 10
