"""Op types come from max(builtin_code, deprecated_builtin_code), as the runtime reads them."""

from __future__ import annotations

from ai_edge_litert import schema_py_generated as schema
from ai_edge_litert.tools import flatbuffer_utils as fu

from inspector.core.tflite.model import Model


def test_legacy_field_left_at_zero_is_ignored(fixture_path, tmp_path):
    m = fu.convert_bytearray_to_object(bytearray(fixture_path("int8").read_bytes()))
    for oc in m.operatorCodes:  # what litert-quantizer writes: only the new field set
        oc.deprecatedBuiltinCode = 0
    p = tmp_path / "zeroed.tflite"
    p.write_bytes(bytes(fu.convert_object_to_bytearray(m)))
    ours = [op.type for op in Model(p).main.ops]
    names = {v: k for k, v in vars(schema.BuiltinOperator).items() if not k.startswith("_")}
    expected = [names[m.operatorCodes[op.opcodeIndex].builtinCode] for op in m.subgraphs[0].operators]
    assert ours == expected and ours[0] == "QUANTIZE" and ours[-1] == "DEQUANTIZE"


def test_written_files_are_not_private(tmp_path):
    import os

    from inspector.core.writing import atomic_write_text

    p = tmp_path / "r.json"
    atomic_write_text(p, "{}")
    mask = os.umask(0)
    os.umask(mask)
    assert (p.stat().st_mode & 0o777) == (0o666 & ~mask)
