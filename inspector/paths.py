"""Where bundled resources live: beside the package in a source tree, in _MEIPASS when frozen."""

from __future__ import annotations

import sys
from pathlib import Path


def resources_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    if frozen:
        return Path(frozen) / "resources"
    return Path(__file__).resolve().parents[1] / "resources"


def example_pair() -> tuple[Path, Path]:
    ex = resources_dir() / "examples"
    return ex / "example_float.tflite", ex / "example_int8.tflite"


def example_inputs() -> Path:
    return resources_dir() / "examples" / "example_inputs.npz"


def app_icon() -> Path:
    return resources_dir() / "icons" / "tflite-inspector.png"
