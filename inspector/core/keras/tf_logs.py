"""Keeping TensorFlow's log lines off the user's terminal.

TensorFlow 2.21 writes through absl before `absl::InitializeLog()` is called, so
`TF_CPP_MIN_LOG_LEVEL` does not silence "WARNING: All log messages before absl::InitializeLog()
...", "cudart_stub.cc:31] Could not find cuda drivers ..." or the oneDNN note; the converter
prints "fully_quantize: 0, inference_type: 6, ..." from C++ and "Saved artifact at ..." to
standard output, and warns "Statistics for quantized inputs were expected" through Python.

`quiet_tf()` runs a block (the import, a model load, a conversion) with the process's standard
output and error (the file descriptors, which C++ writes to) sent to a temporary file and
Python's warnings and absl's Python logging at error level; afterwards it writes to stderr the
lines that are not such chatter, so a real error still reaches the user. Standard output stays
clean for `--json -`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Iterator

# Lines TensorFlow, absl and the converter print that say nothing to the user.
_NOISE = (
    re.compile(r"^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR"),
    re.compile(r"^[IW]\d{4} [\d:.]+\s+\d+ \S+:\d+\] "),  # absl INFO / WARNING lines
    re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IW] "),  # TF's older C++ log format
    re.compile(r"^(fully_quantize|Saved artifact at|Output Type:|Captures:|Args:|Returns:|  [A-Za-z_]+: |    )"),
    re.compile(r"^\s*(warnings\.warn\(|.*UserWarning: .*)$"),
)


def is_noise(line: str) -> bool:
    return not line.strip() or any(p.search(line) for p in _NOISE)


def filtered(text: str) -> str:
    """`text` without the lines `is_noise` drops."""
    return "".join(ln for ln in text.splitlines(keepends=True) if not is_noise(ln))


def silence_python_loggers() -> None:
    """absl's and TensorFlow's Python loggers at error level (call after importing them)."""
    for name in ("absl", "tensorflow", "h5py"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with contextlib.suppress(ImportError):
        from absl import logging as absl_logging

        absl_logging.set_verbosity(absl_logging.ERROR)


@contextlib.contextmanager
def quiet_tf() -> Iterator[None]:
    """Run the block with fds 1 and 2 captured and warnings ignored; replay the rest to stderr."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved_out, saved_err = os.dup(1), os.dup(2)
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(sys.stderr):
                warnings.simplefilter("ignore")
                yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved_out, 1)
            os.dup2(saved_err, 2)
            os.close(saved_out)
            os.close(saved_err)
            sink.seek(0)
            rest = filtered(sink.read().decode("utf-8", "replace"))
            if rest:
                sys.stderr.write(rest)
                sys.stderr.flush()
