"""TFLite Quantization Inspector."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`__version__`, read from the installed metadata when first asked for: importing
    `importlib.metadata` costs 40-80 ms, which a command that never shows the version skips."""
    if name != "__version__":
        raise AttributeError(f"module 'inspector' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("tflite-inspector")
    except PackageNotFoundError:  # running from a source tree that was not installed
        value = "0.1.0"
    globals()["__version__"] = value
    return value
