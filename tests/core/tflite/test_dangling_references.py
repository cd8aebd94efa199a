"""The tool opens what it writes, and what LiteRT runs (issue 18 §4).

Measured: `requantize FLOAT --out q.tflite` of a float model without signature whose legacy
`metadata_buffer` list names a buffer wrote a model whose list named a buffer past the end
(litert-quantizer renumbers buffers but not that list); `info q.tflite` then refused it although
the LiteRT interpreter runs it. Models are built from the converter's float model without
signature, edited with the LiteRT schema object API; references are checked with an independent
parse (the `tflite` flatbuffer package) and the LiteRT interpreter runs every file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite
from ai_edge_litert.tools import flatbuffer_utils as fu

from inspector.core.requantize.quantizer_route import requantize
from inspector.core.review.audit import audit_model
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model

REPO = Path(__file__).resolve().parents[3]


def _edit(src: Path, dest: Path, change) -> Path:
    """A copy of `src` changed by `change(ModelT)`, serialized with the plain object API (no repair)."""
    m = fu.convert_bytearray_to_object(bytearray(src.read_bytes()))
    change(m)
    dest.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    return dest


def _metadata_buffer(name: bytes):
    def change(m) -> None:
        m.metadataBuffer = [next(int(x.buffer) for x in m.metadata if x.name == name)]

    return change


def _dangling(m) -> None:
    m.metadataBuffer = [len(m.buffers)]  # one past the end, as the quantizer route wrote it


def _references(path: Path) -> tuple[int, list[int], dict[str, int]]:
    """(buffer count, metadata_buffer entries, metadata name -> buffer), parsed with `tflite`."""
    fb = tflite.Model.GetRootAs(path.read_bytes(), 0)
    mb = [int(x) for x in fb.MetadataBufferAsNumpy()] if fb.MetadataBufferLength() else []
    md = {fb.Metadata(i).Name().decode(): int(fb.Metadata(i).Buffer()) for i in range(fb.MetadataLength())}
    return fb.BuffersLength(), mb, md


def _buffer_bytes(path: Path, index: int) -> bytes:
    fb = tflite.Model.GetRootAs(path.read_bytes(), 0)
    b = fb.Buffers(index)
    return b.DataAsNumpy().tobytes() if b.DataLength() else b""


def _run(path: Path) -> np.ndarray:
    """LiteRT's output on a fixed input (the interpreter accepts the file)."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    it.allocate_tensors()
    d = it.get_input_details()[0]
    x = np.random.default_rng(1).uniform(-1, 1, d["shape"]).astype(d["dtype"])
    it.set_tensor(d["index"], x)
    it.invoke()
    return it.get_tensor(it.get_output_details()[0]["index"]).copy()


def _cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "inspector", *map(str, args)], capture_output=True, text=True, cwd=REPO)


def test_dangling_metadata_buffer_opens_with_a_warning(fixture_path, tmp_path):
    src = fixture_path("no_signature")
    bad = _edit(src, tmp_path / "dangling.tflite", _dangling)
    n, mb, _ = _references(bad)
    assert mb == [n]  # independent parse: one past the end
    np.testing.assert_array_equal(_run(bad), _run(src))  # the interpreter runs it, same output
    p = _cli("info", bad)
    assert p.returncode == 0, p.stderr
    assert f"warning: metadata_buffer entry 0 names buffer {n}, but the model has {n} buffers" in p.stdout
    p = _cli("info", bad, "--json", "-")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["format_warnings"] == [f"metadata_buffer entry 0 names buffer {n}, but the model has {n} buffers (ignored)"]
    (f,) = [f for f in audit_model(load_model(bad)) if f.rule == "dangling-reference"]
    assert f.severity == "warning" and f"buffer {n}" in f.message


def test_metadata_entry_past_the_buffers_is_ignored_with_a_warning(fixture_path, tmp_path):
    src = fixture_path("no_signature")

    def change(m) -> None:
        m.metadata[0].buffer = len(m.buffers) + 3

    bad = _edit(src, tmp_path / "entry.tflite", change)
    n, _, md = _references(bad)
    assert md["min_runtime_version"] == n + 3
    np.testing.assert_array_equal(_run(bad), _run(src))
    m = load_model(bad)
    assert "min_runtime_version" not in m.metadata and m.metadata_bytes("min_runtime_version") is None
    assert m.metadata_bytes("CONVERSION_METADATA") == _buffer_bytes(bad, md["CONVERSION_METADATA"])
    assert m.format_warnings == (f"metadata entry 0 ('min_runtime_version') names buffer {n + 3}, but the model has {n} buffers (ignored)",)
    assert _cli("info", bad).returncode == 0


def test_a_tensor_naming_a_missing_buffer_is_still_refused(fixture_path, tmp_path):
    """What the interpreter refuses (a tensor's buffer past the end) stays an error, exit 2."""
    from ai_edge_litert.interpreter import Interpreter

    def change(m) -> None:
        t = next(t for t in m.subgraphs[0].tensors if t.buffer > 0 and m.buffers[t.buffer].data is not None)
        t.buffer = len(m.buffers) + 1

    bad = _edit(fixture_path("no_signature"), tmp_path / "tensor.tflite", change)
    with pytest.raises(Exception):  # noqa: B017 - the interpreter's own refusal, any type
        Interpreter(model_path=str(bad)).allocate_tensors()
    p = _cli("info", bad)
    assert p.returncode == 2 and "names buffer" in p.stderr


def test_quantizer_route_output_opens(fixture_path, tmp_path):
    """The measured defect: a float model without signature whose metadata_buffer names its
    min_runtime_version buffer, through `requantize FLOAT --out` (the quantizer route)."""
    src = _edit(fixture_path("no_signature"), tmp_path / "legacy_md.tflite", _metadata_buffer(b"min_runtime_version"))
    _, mb_src, md_src = _references(src)
    runtime_version = _buffer_bytes(src, mb_src[0])
    assert mb_src == [md_src["min_runtime_version"]] and runtime_version
    result = requantize(src, sample_settings=SampleSettings(count=4))
    out = tmp_path / "q.tflite"
    out.write_bytes(result.model_bytes)
    n, mb, md = _references(out)
    assert all(0 <= b < n for b in mb) and all(0 <= b < n for b in md.values())
    assert mb == [md["min_runtime_version"]] and _buffer_bytes(out, mb[0]) == runtime_version  # same metadata, renumbered
    assert any("metadata_buffer" in note and "renumbered" in note for note in result.notes)
    m = load_model(out)
    assert m.format_warnings == ()
    assert any(t.dtype == "int8" for t in m.main.tensors)
    _run(out)
    p = _cli("info", out)
    assert p.returncode == 0 and "warning:" not in p.stdout


def test_every_writer_repairs_dangling_references(fixture_path, tmp_path):
    """The one object-API writer (`edit.write`: surgical route, working copies) and the rewritten
    copies (`rewrite.read_object` / `to_bytes`: exposed intermediates rebuilt, isolated error) drop
    dangling references; a surgical edit of a B with a dangling metadata_buffer writes a file
    without it. (Exposed intermediates patched in place keep the input's bytes: the interpreter,
    their only reader, ignores the list.)"""
    from inspector.core.tflite import edit as fe
    from inspector.core.tflite.rewrite import read_object, to_bytes

    bad = _edit(fixture_path("int8"), tmp_path / "b.tflite", _dangling)
    model = fe.read(bad.read_bytes())
    notes = fe.repair_references(model)
    assert notes and "metadata_buffer" in notes[0]
    for data in (fe.write(fe.read(bad.read_bytes())), to_bytes(read_object(str(bad)))):
        path = tmp_path / "w.tflite"
        path.write_bytes(data)
        n, mb, md = _references(path)
        assert all(0 <= b < n for b in mb + list(md.values()))
        assert load_model(path).format_warnings == ()

    out = tmp_path / "surgical.tflite"
    p = _cli("requantize", fixture_path("float"), bad, "--out", out, "--keep-float", "op:1", "--samples", 2)
    assert p.returncode == 0, p.stderr
    n, mb, _ = _references(out)
    assert all(0 <= b < n for b in mb)
    assert load_model(out).format_warnings == ()
    _run(out)
