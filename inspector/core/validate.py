"""Structural checks of a TFLite flatbuffer before the parser or the runtime trusts it."""

from __future__ import annotations

import struct

from inspector.core.errors import ModelFormatError

MAGIC = b"TFL3"


def validate_flatbuffer(buf, path: str) -> None:
    """Raise ModelFormatError if `buf` cannot be a TFLite model.

    Cheap checks on the header only; deeper per-table checks live beside the parser.
    """
    n = len(buf)
    if n < 8:
        raise ModelFormatError(f"the file is {n} bytes long, too short to be a TFLite model", path)
    if bytes(buf[4:8]) != MAGIC:
        raise ModelFormatError(
            f"not a TFLite model: expected the identifier 'TFL3' at byte 4, found {bytes(buf[4:8])!r}", path
        )
    (root,) = struct.unpack_from("<I", buf, 0)
    if root + 4 > n:
        raise ModelFormatError(f"the root table offset ({root}) points past the end of the file ({n} bytes): truncated?", path)
