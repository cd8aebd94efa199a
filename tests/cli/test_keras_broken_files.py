"""Issue 34 §9: broken Keras files are recognised before TensorFlow is imported and said in the
project's words, one line, exit 2. Before: after a 25 s TensorFlow import, `cannot load the Keras
model (OSError: Unable to synchronously open file (truncated file: eof = ...))` for a truncated
.h5, `(OSError: ... file signature not found)` for a text file named .keras, `Wire format was
corrupt` for a fake SavedModel. The commands here run with TensorFlow made unimportable: a check
that needed it would answer "needs TensorFlow" instead of naming what is wrong with the file."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from inspector.core.errors import InputError
from inspector.core.keras import tf_import
from inspector.core.keras.detect import check_model_input
from tests.helpers.paths import REPO


def _broken(keras_models: Path, d: Path) -> dict[str, tuple[Path, str]]:
    h5 = (keras_models / "cnn_float.h5").read_bytes()
    keras = (keras_models / "cnn_float.keras").read_bytes()
    pb = (keras_models / "cnn_float_sm" / "saved_model.pb").read_bytes()
    (d / "cut.h5").write_bytes(h5[: len(h5) // 3])
    (d / "text.keras").write_text("not a model\n")
    (d / "cut.keras").write_bytes(keras[: len(keras) // 2])
    (d / "empty.h5").write_bytes(b"")
    for name, content in (("fake_sm", b"this is not a protobuf"), ("cut_sm", pb[: len(pb) // 2])):
        (d / name).mkdir()
        (d / name / "saved_model.pb").write_bytes(content)
    return {
        "truncated h5": (d / "cut.h5", f"a truncated HDF5 file: it has {len(h5) // 3:,} bytes, its header says {len(h5):,}"),
        "text .keras": (d / "text.keras", "not a zip archive: a .keras model is the zip archive"),
        "truncated .keras": (d / "cut.keras", "a damaged or truncated .keras archive"),
        "empty h5": (d / "empty.h5", "an empty file: a .h5 Keras model is an HDF5 file"),
        "fake SavedModel": (d / "fake_sm", "a SavedModel folder whose saved_model.pb is not a SavedModel protobuf"),
        "truncated SavedModel": (d / "cut_sm", "a SavedModel folder whose saved_model.pb is not a SavedModel protobuf"),
    }


@pytest.fixture(scope="module")
def broken(keras_models, tmp_path_factory):
    return _broken(keras_models, tmp_path_factory.mktemp("broken"))


def test_real_keras_files_pass_the_check(keras_models):
    for p in [*keras_models.glob("*.h5"), *keras_models.glob("*.keras"), *keras_models.glob("*_sm")]:
        check_model_input(p)  # no false alarm on what TensorFlow wrote


@pytest.mark.parametrize("kind", ["truncated h5", "text .keras", "truncated .keras", "empty h5", "fake SavedModel",
                                  "truncated SavedModel"])  # fmt: skip
def test_broken_keras_file_is_named_without_tensorflow(kind, broken, keras_models, tmp_path):
    path, says = broken[kind]
    block = tmp_path / "block"
    block.mkdir()
    for module in ("tensorflow", "tf_keras"):
        (block / f"{module}.py").write_text(f"raise ImportError('{module} blocked for the test', name='{module}')\n")
    env = {**os.environ, "PYTHONPATH": f"{block}{os.pathsep}{REPO}"}
    cmds = {
        "info": ["info", path],
        "compare": ["compare", path, keras_models / "cnn_float_int8.tflite"],
        "convert": ["convert", path, "--out-dir", tmp_path / "twins"],
    }
    for cmd, argv in cmds.items():
        r = subprocess.run([sys.executable, "-m", "inspector", *map(str, argv)], capture_output=True, text=True,
                           env=env, cwd=tmp_path, timeout=120)  # fmt: skip
        lines = r.stderr.strip().splitlines()
        assert r.returncode == 2 and len(lines) == 1, (cmd, r.stderr)
        assert lines[0].startswith(f"tflite-inspector {cmd}: {path}: {says}"), (cmd, lines[0])
    assert not (tmp_path / "twins").exists()


def test_missing_tensorflow_package_is_named(monkeypatch):
    """Without TensorFlow the message read `(None is missing)` when the ImportError carried no
    module name; now the package that cannot be found is named."""
    assert tf_import._missing(ImportError("x", name="tf_keras")) == "tf_keras is missing"
    assert tf_import._missing(ImportError("x", name="tensorflow.python.pywrap")) == "tensorflow is missing"
    import importlib.util

    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "tf_keras" else object())
    assert tf_import._missing(ImportError("DLL load failed")) == "tf_keras is missing"
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: object())
    assert tf_import._missing(ImportError("libcudart.so: cannot open")) == (
        "they are installed but do not import: libcudart.so: cannot open")


def test_the_check_reads_the_hdf5_superblock_versions(tmp_path):
    """Superblock v0 (h5py's default) is what the fixtures exercise; v2 (libver='latest') is
    checked here on a hand-made header: its end-of-file address decides."""
    import struct

    sig = b"\x89HDF\r\n\x1a\n"
    header = sig + bytes([2, 8, 8, 0]) + struct.pack("<QQQQ", 0, 0xFFFFFFFFFFFFFFFF, 4096, 48) + b"\0" * 4
    p = tmp_path / "v2.h5"
    p.write_bytes(header + b"\0" * (4096 - len(header)))
    check_model_input(p)
    p.write_bytes(header + b"\0" * 100)
    with pytest.raises(InputError, match="its header says 4,096"):
        check_model_input(p)
