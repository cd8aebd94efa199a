""".litertlm bundles built at test time with litert-lm-builder: sections listed as the package's
own reader (litertlm_peek's schema) sees them, a TFLite section opened and compared as a file."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.errors import ModelFormatError
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.litertlm import read_bundle
from inspector.core.tflite.model import load_model
from tests.helpers.shape_fixtures import cache_path

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".fixture-cache"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory) -> tuple[Path, Path, Path]:
    lm = pytest.importorskip("litert_lm_builder")
    d = tmp_path_factory.mktemp("bundle")
    f, q = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    tok = d / "tokenizer.model"
    tok.write_bytes(b"\x0a\x05hello" * 50)
    b = lm.LitertLmFileBuilder()
    b.add_system_metadata(lm.Metadata(key="author", value="tests", dtype=lm.DType.STRING))
    b.add_system_metadata(lm.Metadata(key="layers", value=2, dtype=lm.DType.INT32))
    b.add_sentencepiece_tokenizer(str(tok))
    b.add_tflite_model(str(f), lm.TfLiteModelType.PREFILL_DECODE)
    b.add_tflite_model(str(q), lm.TfLiteModelType.AUX)
    out = d / "model.litertlm"
    with open(out, "wb") as fh:
        b.build(fh)
    return out, f, q


def _independent_sections(path: Path) -> list[tuple[int, int, int]]:
    """(data type, begin, end) per section, through litert-lm-builder's generated schema."""
    from litert_lm_builder import litertlm_header_schema_py_generated as schema

    data = path.read_bytes()
    end = int.from_bytes(data[24:32], "little")
    meta = schema.LiteRTLMMetaData.GetRootAs(bytearray(data[32:end]), 0)
    sm = meta.SectionMetadata()
    return [(sm.Objects(i).DataType(), sm.Objects(i).BeginOffset(), sm.Objects(i).EndOffset()) for i in range(sm.ObjectsLength())]


def test_sections_listed(bundle):
    path, f, q = bundle
    b = read_bundle(path)
    assert [(s.kind, s.offset, s.offset + s.size) for s in b.sections] == [
        ({3: "tflite_model", 4: "sp_tokenizer"}[t], lo, hi) for t, lo, hi in _independent_sections(path)
    ]
    assert [s.kind for s in b.sections] == ["sp_tokenizer", "tflite_model", "tflite_model"]
    assert dict(b.system)["author"] == "tests" and dict(b.system)["layers"] == 2
    assert dict(b.sections[1].items)["model_type"] == "tf_lite_prefill_decode"
    data = path.read_bytes()
    assert data[b.sections[1].offset : b.sections[1].offset + b.sections[1].size] == f.read_bytes()
    assert data[b.sections[2].offset : b.sections[2].offset + b.sections[2].size] == q.read_bytes()


def test_section_opens_like_the_file(bundle):
    path, f, _ = bundle
    m, ref = load_model(f"{path}#1"), load_model(f)
    assert m.size_bytes == f.stat().st_size
    assert [s.key for s in m.signatures] == [s.key for s in ref.signatures]
    for sg, rsg in zip(m.subgraphs, ref.subgraphs, strict=True):
        assert [op.type for op in sg.ops] == [op.type for op in rsg.ops]
        for t, rt in zip(sg.tensors, rsg.tensors, strict=True):
            a, b = m.tensor_data(t), ref.tensor_data(rt)
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(a, b)
    with pytest.raises(ModelFormatError, match="section 0 is sp_tokenizer"):
        load_model(f"{path}#0")
    with pytest.raises(ModelFormatError, match="no section 7"):
        load_model(f"{path}#7")
    with pytest.raises(ModelFormatError, match=r"model.litertlm#N"):
        load_model(path)


def test_section_compares_like_the_files(bundle):
    path, f, q = bundle
    opts = CompareOptions(signature="prefill", samples=SampleSettings(count=2), runtime="reference")
    a = compare_models(f"{path}#1", f"{path}#2", opts)
    b = compare_models(str(f), str(q), opts)
    assert [x.metrics.mse for x in a.layers] == [x.metrics.mse for x in b.layers]
    assert len(a.layers) >= 4


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "inspector", *map(str, args)], capture_output=True, text=True,
                          cwd=REPO, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})  # fmt: skip


def test_cli_info_and_compare(bundle, tmp_path):
    path, _, _ = bundle
    p = _cli("info", path)
    assert p.returncode == 0, p.stderr
    assert "sp_tokenizer" in p.stdout and f"{path}#1" in p.stdout and f"{path}#2" in p.stdout
    p = _cli("info", path, "--json", "-")
    assert [s["kind"] for s in json.loads(p.stdout)["sections"]] == ["sp_tokenizer", "tflite_model", "tflite_model"]
    p = _cli("info", f"{path}#2")
    assert p.returncode == 0 and "signatures: decode, prefill" in p.stdout
    p = _cli("compare", f"{path}#1", f"{path}#2", "--signature", "decode", "--samples", 2, "--json", "-")
    assert p.returncode == 0, p.stderr
    assert [o["name"] for o in json.loads(p.stdout)["outputs"]] == ["logits"]
    p = _cli("compare", path, f"{path}#2")
    assert p.returncode == 2 and "#N" in p.stderr and len(p.stderr.strip().splitlines()) == 1
