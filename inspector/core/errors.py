"""Errors that carry a message fit to show a user: which file, what is wrong."""

from __future__ import annotations


class InspectorError(Exception):
    """Base class: bad input the user can act on (CLI exit code 2, GUI error banner)."""

    def __init__(self, message: str, path: str | None = None) -> None:
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


class ModelFormatError(InspectorError):
    """The file is not a readable TFLite flatbuffer (truncated, wrong magic, bad offsets)."""


class InputError(InspectorError):
    """Sample inputs do not fit the model (shape, dtype, missing keys, unreadable files)."""


class RuntimeFailure(InspectorError):
    """The LiteRT runtime refused or crashed on a model (custom op, bad kernel, worker died)."""


class PairingError(InspectorError):
    """A float/quantized pair that does not correspond."""


class OutputError(InspectorError, OSError):
    """An output cannot be written (missing or read-only folder, full disk). Also an OSError, so
    code that handles failed writes as OSErrors keeps working."""


class Cancelled(Exception):
    """The user cancelled a long operation; not an error to report."""
