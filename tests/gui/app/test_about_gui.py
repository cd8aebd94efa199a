"""Help > About lists the runtime versions a bug report needs, read independently here."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

import numpy
import pyqtgraph
import PySide6
from PySide6.QtCore import qVersion

from inspector import __version__


def test_about_lists_runtime_versions(qtbot, window):
    window.act_about.trigger()
    text = window._about.text()
    window._about.close()
    for label, v in (("Python", platform.python_version()), ("numpy", numpy.__version__),
                     ("PySide6 / Qt", f"{PySide6.__version__} / Qt {qVersion()}"), ("pyqtgraph", pyqtgraph.__version__),
                     ("ai-edge-litert", version("ai-edge-litert")), ("litert-quantizer", version("litert-quantizer")),
                     ("tflite", version("tflite")), ("tflite-inspector", __version__)):  # fmt: skip
        assert f">{label}</td><td>&nbsp;&nbsp;{v}" in text, label
    tf = "not installed"
    for dist in ("tensorflow-cpu", "tensorflow"):
        try:
            tf = version(dist)
        except PackageNotFoundError:
            continue
    assert f">TensorFlow</td><td>&nbsp;&nbsp;{tf}</td>" in text


def test_missing_package_is_named_not_installed():
    from inspector.core.runtime.versions import NOT_INSTALLED, package_version

    assert package_version(("no-such-distribution-xyz",), "no_such_module_xyz") == NOT_INSTALLED
    assert package_version(("no-such-distribution-xyz",), "numpy") == numpy.__version__
