"""Structural validation: every real fixture passes; each kind of corruption gets a precise message."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest
import tflite

from inspector.core.errors import ModelFormatError
from inspector.core.tflite.model import Model
from inspector.core.tflite.validate import MAX_CALL_DEPTH, MAX_TENSORS, validate_flatbuffer
from tests.helpers.hostile_fixtures import (
    BuiltinOperator,
    edit_model,
    fb,
    read_object,
    to_offset_buffers,
)
from tests.helpers.paths import ALL_FIXTURES, EXAMPLES


def rejected(tmp_path: Path, data: bytes, name: str = "bad.tflite") -> str:
    """Model(path) must raise ModelFormatError naming the file; return the message."""
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(ModelFormatError) as ei:
        Model(p)
    assert ei.value.path == str(p)
    assert str(p) in str(ei.value)
    return ei.value.message


def accepted(tmp_path: Path, data: bytes) -> Model:
    p = tmp_path / "ok.tflite"
    p.write_bytes(data)
    return Model(p)


@pytest.fixture(scope="module")
def int8(fixture_path) -> Path:
    return fixture_path("int8")


@pytest.mark.parametrize("name", ALL_FIXTURES)
def test_real_fixtures_pass(fixture_path, name):
    validate_flatbuffer(fixture_path(name).read_bytes(), name)


def test_examples_pass():
    for p in EXAMPLES.glob("*.tflite"):
        validate_flatbuffer(p.read_bytes(), str(p))


# ---------------------------------------------------------------------- header
@pytest.mark.parametrize(
    "data, expected",
    [
        (b"", "the file is empty"),
        (b"\x08\0\0\0TF", "6 bytes long, too short"),
        (b"\x08\0\0\0TFL2" + b"\0" * 40, "expected the identifier 'TFL3' at byte 4, found b'TFL2'"),
        (b"\xff\xff\0\0TFL3" + b"\0" * 40, "root table offset (65535) points past the end of the file (48 bytes)"),
    ],
)
def test_header(tmp_path, data, expected):
    assert expected in rejected(tmp_path, data)


def test_directory_and_missing_file(tmp_path):
    with pytest.raises(ModelFormatError, match="cannot read the file"):
        Model(tmp_path / "missing.tflite")
    with pytest.raises(ModelFormatError, match="cannot read the file"):
        Model(tmp_path)


# ---------------------------------------------------------------------- index ranges
def test_op_input_out_of_range(tmp_path, int8):
    obj = read_object(int8)
    n = len(obj.subgraphs[0].tensors)

    def bad(m):
        m.subgraphs[0].operators[5].inputs[0] = 812

    msg = rejected(tmp_path, edit_model(int8, bad))
    assert msg == f"op 5 of subgraph 0 reads tensor 812 but the subgraph has {n} tensors"


def test_op_output_negative(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].operators[3].outputs[0] = -5

    assert "op 3 of subgraph 0 writes tensor -5" in rejected(tmp_path, edit_model(int8, bad))


def test_omitted_optional_input_is_allowed(tmp_path, int8):
    def omit(m):  # FULLY_CONNECTED without bias
        m.subgraphs[0].operators[12].inputs[2] = -1

    model = accepted(tmp_path, edit_model(int8, omit))
    assert model.main.ops[12].inputs[2] == -1


def test_subgraph_output_out_of_range(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].outputs = [1000]

    assert "subgraph 0 lists tensor 1000 among its outputs" in rejected(tmp_path, edit_model(int8, bad))


def test_opcode_index_out_of_range(tmp_path, int8):
    obj = read_object(int8)

    def bad(m):
        m.subgraphs[0].operators[2].opcodeIndex = 77

    msg = rejected(tmp_path, edit_model(int8, bad))
    assert msg == f"op 2 of subgraph 0 names opcode 77, but the model has {len(obj.operatorCodes)} operator codes"


def test_tensor_buffer_out_of_range(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[7].buffer = 4000

    assert "tensor 7 of subgraph 0 names buffer 4000, but the model has" in rejected(tmp_path, edit_model(int8, bad))


def test_signature_references(tmp_path, int8):
    def bad_sg(m):
        m.signatureDefs[0].subgraphIndex = 3

    assert "signature 0 ('serving_default') names subgraph 3, but the model has 1" in rejected(tmp_path, edit_model(int8, bad_sg))

    def bad_t(m):
        m.signatureDefs[0].outputs[0].tensorIndex = 99

    assert "signature 0 ('serving_default') output 0 names tensor 99" in rejected(tmp_path, edit_model(int8, bad_t))


def test_no_subgraphs(tmp_path, int8):
    def bad(m):
        m.subgraphs = []
        m.signatureDefs = []

    assert rejected(tmp_path, edit_model(int8, bad)) == "the model has no subgraphs"


# ---------------------------------------------------------------------- shapes, types, quantization
def test_shape_does_not_match_buffer(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[5].shape = [32, 2047]  # fc1 kernel holds 32*2048 int8

    msg = rejected(tmp_path, edit_model(int8, bad))
    assert msg.startswith("tensor 5 of subgraph 0 has shape [32, 2047] (65504 int8 values, 65504 bytes)")
    assert msg.endswith("holds 65536 bytes")


def test_negative_dimension(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[20].shape = [1, -8, 8, 32]

    assert "tensor 20 of subgraph 0 has a negative dimension in its shape [1, -8, 8, 32]" in rejected(tmp_path, edit_model(int8, bad))


def test_element_count_overflow(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[20].shape = [2**31 - 1] * 4

    msg = rejected(tmp_path, edit_model(int8, bad))
    assert "tensor 20 of subgraph 0" in msg and "beyond any real model" in msg
    assert str((2**31 - 1) ** 4) in msg


def test_unknown_tensor_type(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[3].type = 99

    assert rejected(tmp_path, edit_model(int8, bad)) == "tensor 3 of subgraph 0 has type 99, which is not a TFLite tensor type"


def test_per_channel_scale_count(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[7].quantization.scale = m.subgraphs[0].tensors[7].quantization.scale[:31]
        m.subgraphs[0].tensors[7].quantization.zeroPoint = m.subgraphs[0].tensors[7].quantization.zeroPoint[:31]

    msg = rejected(tmp_path, edit_model(int8, bad))
    assert msg == "tensor 7 of subgraph 0 has 31 per-channel scales but dimension 0 of its shape [32, 3, 3, 16] has 32 channels"


def test_quantized_dimension_beyond_rank(tmp_path, int8):
    def bad(m):
        m.subgraphs[0].tensors[9].quantization.quantizedDimension = 7

    assert "tensor 9 of subgraph 0 is quantized along dimension 7 but has rank 4" in rejected(tmp_path, edit_model(int8, bad))


# ---------------------------------------------------------------------- buffers
def test_offset_buffers_read_like_inline(tmp_path, int8):
    inline = Model(int8)
    moved = accepted(tmp_path, to_offset_buffers(int8))
    assert moved._buffer_extent(5)[0] > 1000  # really stored after the flatbuffer
    checked = 0
    for a, b in zip(inline.main.tensors, moved.main.tensors, strict=True):
        da, db = inline.tensor_data(a), moved.tensor_data(b)
        assert (da is None) == (db is None)
        if da is not None:
            np.testing.assert_array_equal(da, db)
            checked += 1
    assert checked >= 10


def test_offset_buffer_past_end(tmp_path, int8):
    data = bytearray(to_offset_buffers(int8))
    cut = bytes(data[: len(data) - 100])
    msg = rejected(tmp_path, cut)
    assert f"but the file has {len(cut)} bytes: truncated or corrupt" in msg
    assert msg.startswith("buffer ")


def test_truncated_inline_model(tmp_path, int8):
    data = int8.read_bytes()
    for cut in (len(data) // 2, len(data) - 9, 200):
        msg = rejected(tmp_path, data[:cut])
        assert "past the end of the file" in msg or "outside the file" in msg, msg


def _vector_length_pos(data: bytes, which: str) -> int:
    """Byte position of the length of subgraph 0's tensors or operators vector."""
    m = tflite.Model.GetRootAs(data, 0)
    sg = m.Subgraphs(0)
    slot = {"tensors": 4, "operators": 10}[which]
    return sg._tab.Vector(sg._tab.Offset(slot)) - 4


@pytest.mark.parametrize("count", [MAX_TENSORS + 1, 2**32 - 1])
def test_huge_vector_count(tmp_path, int8, count):
    data = bytearray(int8.read_bytes())
    struct.pack_into("<I", data, _vector_length_pos(bytes(data), "tensors"), count)
    msg = rejected(tmp_path, bytes(data))
    assert msg == f"subgraph 0, 'tensors' has {count} entries, more than this tool accepts ({MAX_TENSORS})"


def test_vector_count_past_end(tmp_path, int8):
    data = bytearray(int8.read_bytes())
    struct.pack_into("<I", data, _vector_length_pos(bytes(data), "operators"), 500_000)
    msg = rejected(tmp_path, bytes(data))
    assert msg.startswith("subgraph 0, 'operators': 500000 entries of 4 bytes")
    assert msg.endswith(f"run past the end of the file ({len(data)} bytes)")


def test_vtable_outside_file(tmp_path, int8):
    data = bytearray(int8.read_bytes())
    root = struct.unpack_from("<I", data, 0)[0]
    struct.pack_into("<i", data, root, -(10**8))
    msg = rejected(tmp_path, bytes(data))
    assert msg == f"model: the table at byte {root} has its field table at byte {root + 10**8}, outside the file"


# ---------------------------------------------------------------------- control flow
def test_while_subgraph_out_of_range(tmp_path, fixture_path):
    def bad(m):
        m.subgraphs[0].operators[0].builtinOptions.bodySubgraphIndex = 9

    msg = rejected(tmp_path, edit_model(fixture_path("multi_subgraph"), bad))
    assert msg == "op 0 of subgraph 0 (WHILE) has body_subgraph_index 9, but the model has 3 subgraphs"


def test_while_cycle(tmp_path, fixture_path):
    def bad(m):
        m.subgraphs[0].operators[0].builtinOptions.bodySubgraphIndex = 0

    msg = rejected(tmp_path, edit_model(fixture_path("multi_subgraph"), bad))
    assert msg == "op 0 of subgraph 0 (WHILE) calls subgraph 0: the subgraphs 0 -> 0 form a cycle"


def test_while_without_options(tmp_path, fixture_path):
    def bad(m):
        op = m.subgraphs[0].operators[0]
        op.builtinOptionsType, op.builtinOptions = 0, None

    assert rejected(tmp_path, edit_model(fixture_path("multi_subgraph"), bad)) == "op 0 of subgraph 0 is a WHILE without its WhileOptions"


def _call_chain(n: int, back_to: int | None = None) -> bytes:
    """n subgraphs, subgraph i CALL_ONCE-s subgraph i+1 (and the last one calls `back_to`)."""
    m = fb.ModelT()
    m.version, m.buffers = 3, [fb.BufferT()]
    oc = fb.OperatorCodeT()
    oc.builtinCode, oc.deprecatedBuiltinCode, oc.version = BuiltinOperator.CALL_ONCE, 127, 1
    m.operatorCodes = [oc]
    m.subgraphs = []
    for i in range(n):
        sg = fb.SubGraphT()
        sg.tensors, sg.inputs, sg.outputs, sg.operators = [], [], [], []
        target = i + 1 if i + 1 < n else back_to
        if target is not None:
            op = fb.OperatorT()
            op.opcodeIndex, op.inputs, op.outputs = 0, [], []
            op.builtinOptionsType = fb.BuiltinOptions.CallOnceOptions
            op.builtinOptions = fb.CallOnceOptionsT()
            op.builtinOptions.initSubgraphIndex = target
            sg.operators = [op]
        m.subgraphs.append(sg)
    from tests.helpers.hostile_fixtures import write_object

    return write_object(m)


def test_call_depth_limit(tmp_path):
    assert len(accepted(tmp_path, _call_chain(MAX_CALL_DEPTH)).subgraphs) == MAX_CALL_DEPTH
    msg = rejected(tmp_path, _call_chain(MAX_CALL_DEPTH + 1))
    assert msg.startswith(f"control flow nests deeper than {MAX_CALL_DEPTH} subgraphs")


def test_longer_cycle(tmp_path):
    assert rejected(tmp_path, _call_chain(4, back_to=1)) == (
        "op 0 of subgraph 3 (CALL_ONCE) calls subgraph 1: the subgraphs 1 -> 2 -> 3 -> 1 form a cycle"
    )


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -0.5])
def test_invalid_scale(tmp_path, int8, value):
    def bad(m):
        m.subgraphs[0].tensors[15].quantization.scale = [value]

    assert rejected(tmp_path, edit_model(int8, bad)) == f"tensor 15 of subgraph 0 has an invalid quantization scale ({value})"


# ---------------------------------------------------------------------- sparsity (runtime kernels trust these arrays)
def _sparse_edit(fixture_path, fn) -> bytes:
    def edit(m):
        t = next(t for t in m.subgraphs[0].tensors if t.sparsity is not None)
        fn(t.sparsity)

    return edit_model(fixture_path("sparse"), edit)


def test_sparse_fixture_layout_is_understood(fixture_path):
    m = Model(fixture_path("sparse"))
    t = next(t for t in m.main.tensors if t.sparsity is not None)
    # 64x64 weights in 1x4 blocks, CSR over 16 block columns: 96 blocks of 4 values stored
    assert t.buffer_size == 96 * 4 * 4


@pytest.mark.parametrize(
    "edit, expected",
    [
        (lambda sp: sp.dimMetadata[1].arraySegments.values.__setitem__(5, 200),
         "is sparse but sparse dimension 1 has segments that do not run from 0 up to its 96 indices"),
        (lambda sp: sp.dimMetadata[1].arrayIndices.values.__setitem__(0, 16),
         "is sparse but sparse dimension 1 has an index outside 0..15"),
        (lambda sp: setattr(sp, "traversalOrder", [0, 0, 2]),
         "is sparse but its traversal order [0, 0, 2] is not a permutation of its dimensions"),
        (lambda sp: setattr(sp, "blockMap", [5]), "is sparse but block 0 maps to dimension 5 of a rank-2 tensor"),
        (lambda sp: setattr(sp.dimMetadata[2], "denseSize", 3),
         "is sparse but block 0 has size 3, which does not divide dimension 1 (64)"),
        (lambda sp: setattr(sp.dimMetadata[0], "denseSize", 65), "is sparse but dense dimension 0 has size 65, expected 64"),
        (lambda sp: sp.dimMetadata.pop(), "is sparse but its traversal order has 3 dimensions and 2 dimension records for a rank-2 tensor"),
    ],
)
def test_corrupt_sparsity(tmp_path, fixture_path, edit, expected):
    def fn(sp):
        for d in sp.dimMetadata:  # object API arrays may be read-only views
            for v in (d.arraySegments, d.arrayIndices):
                if v is not None:
                    v.values = np.array(v.values).copy()
        edit(sp)

    msg = rejected(tmp_path, _sparse_edit(fixture_path, fn))
    assert msg.startswith("tensor 1 of subgraph 0 ") and msg.endswith(expected), msg


def test_sparse_data_size(tmp_path, fixture_path):
    def fn(sp):
        d = sp.dimMetadata[1]
        d.arraySegments.values = np.minimum(np.array(d.arraySegments.values), 95).astype(np.uint8)
        d.arrayIndices.values = np.array(d.arrayIndices.values)[:-1].copy()  # one block fewer

    msg = rejected(tmp_path, _sparse_edit(fixture_path, fn))
    assert msg.startswith("tensor 1 of subgraph 0 is sparse with 380 stored values (1520 bytes) but buffer ")
    assert msg.endswith(" holds 1536 bytes"), msg
