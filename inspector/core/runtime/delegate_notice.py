"""Keep LiteRT's "INFO: Created TensorFlow Lite XNNPACK delegate for CPU." off the terminal.

LiteRT writes that line to file descriptor 2 the first time a process creates the XNNPACK
delegate, and never again in that process (a log-once flag in the library). `swallow` creates
the delegate once on a three-tensor ADD model with descriptor 2 pointed at /dev/null, so the
flag is spent where nobody reads it; the runtime's later messages (a kernel's refusal, a crash)
still reach stderr. The worker process calls it when it starts, the self-test before it runs
models in its own process.
"""

from __future__ import annotations

import base64
import os
import sys
import threading

# ADD(a, b) -> y on float32[1] tensors (built with the schema's object API; 312 bytes).
_TINY_MODEL = base64.b64decode(
    "GAAAAFRGTDMAAA4AFAAQAAwACAAAAAQADgAAABAAAAAYAAAABAEAAAMAAAABAAAABAAAAAT///8BAAAAEAAAAAwAFAAQAAwACAAEAAwAAAAQAAAAUAAAAFQA"
    "AABcAAAAAQAAABQAAAAAAA4AFAAAABAADAALAAQADgAAABAAAAAAAAALDAAAABAAAABc////AQAAAAIAAAACAAAAAAAAAAEAAAABAAAAAgAAAAIAAAAAAAAA"
    "AQAAAAMAAABQAAAAJAAAAAQAAADI////CAAAAAwAAAABAAAAeQAAAAEAAAABAAAA5P///wgAAAAMAAAAAQAAAGIAAAABAAAAAQAAAAwADAAIAAAAAAAEAAwA"
    "AAAIAAAADAAAAAEAAABhAAAAAQAAAAEAAAABAAAACAAAAAQABAAEAAAA"
)
_lock = threading.Lock()
_done = False


def swallow() -> None:
    """Spend LiteRT's log-once XNNPACK notice with stderr pointed at /dev/null (once per process)."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        try:
            from ai_edge_litert.interpreter import Interpreter, OpResolverType

            sys.stderr.flush()
            saved = os.dup(2)
        except (ImportError, OSError, ValueError, AttributeError):
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 2)
            it = Interpreter(model_content=_TINY_MODEL, experimental_op_resolver_type=OpResolverType.AUTO, num_threads=1)
            it.allocate_tensors()
            del it
        except Exception:  # noqa: BLE001 - only a message is at stake; the real runs report their own errors
            pass
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)
