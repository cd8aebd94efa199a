"""The worker side of `runtime.worker`: a loop that runs calls sent over a pipe.

Messages parent -> worker: ("call", fn, args, kwargs) or ("exit",).
Messages worker -> parent: ("progress", fraction | None, message), ("result", value),
("cancelled",), ("inspector_error", module, class name, message, path),
("memory", message), ("exception", one-line message, traceback text).
Cancellation is an Event the parent sets; the work function gets a `TaskState` (`task=`) whose
reports go to the parent and whose `cancelled` flag is that Event.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from typing import TYPE_CHECKING, Any

from inspector.core.errors import Cancelled, InspectorError
from inspector.core.progress import TaskState

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.synchronize import Event


def _watch_parent(ppid: int) -> None:
    """Exit when the process that started us is gone (the app crashed or was killed)."""
    while True:
        time.sleep(0.5)
        if os.getppid() != ppid:
            os._exit(3)


def worker_main(conn: Connection, cancel_event: Event, memory_limit: int | None = None) -> None:
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    from inspector.core.runtime.delegate_notice import swallow

    swallow()  # LiteRT's "Created TensorFlow Lite XNNPACK delegate" line never reaches the terminal
    from inspector.core.writing import leave_outputs

    leave_outputs()  # a forked worker inherits the command's output transaction: its own files (caches) are written, not staged
    if memory_limit:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))

    task = TaskState(lambda fraction, message: conn.send(("progress", fraction, message)), cancel_event.is_set)

    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            return
        if msg[0] != "call":
            return
        _, fn, args, kwargs = msg
        reply: tuple[Any, ...]
        try:
            reply = ("result", fn(*args, task=task, **kwargs))
        except Cancelled:
            reply = ("cancelled",)
        except InspectorError as e:
            reply = ("inspector_error", type(e).__module__, type(e).__qualname__, e.message, e.path)
        except MemoryError as e:
            reply = ("memory", str(e))
        except BaseException as e:  # noqa: BLE001 - everything goes back to the parent as text
            # imported here: it loads numpy, which starting the worker does not need
            from inspector.core.runtime.probe import explain_runtime_error

            reply = ("exception", explain_runtime_error(e), traceback.format_exc())
        try:
            conn.send(reply)
        except Exception as e:  # noqa: BLE001 - e.g. a result that cannot be pickled
            conn.send(("exception", f"the result could not be sent back ({type(e).__name__}: {e})", traceback.format_exc()))
