"""Versions of the app and the libraries its numbers depend on (Help > About, bug reports).

Read from the installed distributions' metadata, so nothing heavy (TensorFlow) is imported;
a module already imported is asked for its `__version__` when metadata is missing (a frozen
bundle may ship without it). Absent optional packages are listed as "not installed".
"""

from __future__ import annotations

import platform
import sys
from importlib.metadata import PackageNotFoundError, version

from inspector import __version__

NOT_INSTALLED = "not installed"
# (label, distributions to try, module to ask for __version__)
PACKAGES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("numpy", ("numpy",), "numpy"),
    ("ai-edge-litert", ("ai-edge-litert", "ai-edge-litert-nightly"), "ai_edge_litert"),
    ("litert-quantizer", ("litert-quantizer", "ai-edge-quantizer"), "litert_quantizer"),
    ("tflite", ("tflite",), "tflite"),
    ("TensorFlow", ("tensorflow", "tensorflow-cpu", "tf-nightly"), "tensorflow"),
)


def package_version(dists: tuple[str, ...], module: str = "") -> str:
    for d in dists:
        try:
            return version(d)
        except PackageNotFoundError:
            continue
    mod = sys.modules.get(module) if module else None
    v = getattr(mod, "__version__", None)
    return str(v) if v else NOT_INSTALLED


def runtime_versions(extra: list[tuple[str, str]] | None = None) -> list[tuple[str, str]]:
    """(label, version) rows: the app, Python, `extra` (the GUI adds PySide6 / Qt, pyqtgraph),
    then numpy, LiteRT, litert-quantizer, tflite and TensorFlow."""
    rows = [("tflite-inspector", __version__),
            ("Python", f"{platform.python_version()} ({platform.python_implementation()}, {platform.system()} {platform.machine()})")]  # fmt: skip
    rows += list(extra or [])
    rows += [(label, package_version(dists, module)) for label, dists, module in PACKAGES]
    return rows
