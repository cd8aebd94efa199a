"""Run interpreter work in a worker process, so a crash in C++ cannot take the app down.

    result = run_isolated(compare_models, fpath, qpath, opts, task=task, timeout=600,
                          step="running samples", models=(fpath, qpath))

`fn` must be a picklable top-level function; it is called as `fn(*args, task=t, **kwargs)`
in the worker, where `t` is a `core.progress.TaskState` whose `report(fraction, message)`
streams back to the caller's `task.report` (in order, on the calling thread) and whose
`cancelled` turns true once the caller's `task` is cancelled.
Cooperative cancellation gets `grace` seconds, then the worker is terminated; either way
`Cancelled` is raised. A crash (SIGSEGV, SIGABRT, SIGKILL, out of memory) or a timeout
raises `RuntimeFailure` naming the step and the models; the next call starts a fresh
worker. `InspectorError`s raised by `fn` come back as the same class and message.
Blocking: the GUI calls it from a worker thread. The Qt GUI process is never forked
("forkserver" on Linux, "spawn" elsewhere). A command-line process, which has no Qt and, when it
starts its worker, no other thread, may fork it instead (`start_default_worker(fork=True)`): the
worker then starts in milliseconds with the modules the command already imported, instead of
after a fresh interpreter's start and imports (a second off the critical path of every command).
A later restart forks only while the process still has a single thread and no Qt, else uses the
default.
"""

from __future__ import annotations

import atexit
import importlib
import multiprocessing as mp
import signal
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import wait
from pathlib import Path
from typing import Any, Generic, TypeVar

from inspector.core.errors import Cancelled, InspectorError, RuntimeFailure
from inspector.core.progress import TaskState, as_task
from inspector.core.runtime.worker_loop import worker_main

R = TypeVar("R")

_SIGNAL_TEXT = {
    signal.SIGSEGV: "crashed (signal SIGSEGV: segmentation fault)",
    signal.SIGABRT: "aborted (signal SIGABRT)",
    signal.SIGBUS: "crashed (signal SIGBUS: bus error; was a model file changed or truncated while open?)",
    signal.SIGFPE: "crashed (signal SIGFPE: arithmetic error)",
    signal.SIGILL: "crashed (signal SIGILL: illegal instruction)",
    signal.SIGKILL: "was killed (signal SIGKILL; the system may have run out of memory)",
    signal.SIGTERM: "was terminated (signal SIGTERM)",
}


# Imported once by the fork server, so each new worker starts with them loaded.
PRELOAD = ("inspector.core.runtime.worker_loop", "numpy", "ai_edge_litert.interpreter", "inspector.core.compare.comparison")


def default_context() -> str:
    return "forkserver" if sys.platform.startswith("linux") else "spawn"


def describe_models(models: Sequence[str | Path]) -> str:
    names = [str(m) for m in models]
    if not names:
        return ""
    if len(names) == 1:
        return f" while running model {names[0]}"
    return f" while running models {', '.join(names[:-1])} and {names[-1]}"


class WorkerProcess:
    """A reusable worker process; restarted transparently after a crash, timeout or kill."""

    def __init__(self, context: str | None = None, memory_limit: int | None = None, grace: float = 2.0, fork: bool = False) -> None:
        """`fork`: start the process by forking this one while it has a single thread (a
        command-line process, never the GUI's); otherwise, and on platforms without fork, by
        `context`."""
        self._ctx = mp.get_context(context or default_context())
        self.fork = fork
        if self._ctx.get_start_method() == "forkserver":
            self._ctx.set_forkserver_preload(["__main__", *PRELOAD])
        self.memory_limit = memory_limit
        self.grace = grace
        self._proc: Any = None
        self._conn: Any = None
        self._cancel_event: Any = None
        self._lock = threading.Lock()
        self.starts = 0  # how many processes were started (tests and diagnostics)

    # ------------------------------------------------------------------ lifecycle
    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None and self._proc.is_alive() else None

    def start(self) -> None:
        """Start the process now (optional: `run` starts it when needed)."""
        if self._proc is not None and self._proc.is_alive():
            return
        self._discard()
        ctx = self._ctx
        qt = any(m.startswith(("PySide6", "PyQt")) for m in sys.modules)  # its native threads are not counted
        if self.fork and not qt and threading.active_count() == 1 and "fork" in mp.get_all_start_methods():
            ctx = mp.get_context("fork")  # no other thread can hold a lock the child would inherit
        parent, child = ctx.Pipe(duplex=True)
        self._cancel_event = ctx.Event()
        self._proc = ctx.Process(  # type: ignore[attr-defined]  # typeshed's BaseContext (get_context(str)) lacks Process; every real context has it
            target=worker_main, args=(child, self._cancel_event, self.memory_limit), daemon=True, name="inspector-worker"
        )
        self._proc.start()
        child.close()
        self._conn = parent
        self.starts += 1

    def close(self) -> None:
        """Ask the worker to exit; kill it if it does not."""
        proc, conn = self._proc, self._conn  # another thread may discard them meanwhile (exit during a run)
        if proc is not None and conn is not None and proc.is_alive():
            try:
                conn.send(("exit",))
            except OSError:
                pass
            proc.join(1.0)
        self._discard()

    def _discard(self) -> None:
        proc, conn = self._proc, self._conn  # read once: a thread ending its run may discard them too
        if proc is not None:
            try:
                if proc.is_alive():
                    proc.terminate()
                    proc.join(1.0)
                    if proc.is_alive():
                        proc.kill()
                        proc.join(5.0)
                if proc.exitcode is not None:
                    proc.close()
            except ValueError:
                pass  # closed by the other thread already
        if conn is not None:
            conn.close()
        # Dropping the cancel event releases its five named semaphores now (their finalizers
        # unregister them): a process ended with os._exit would otherwise leave them to the
        # resource tracker, which warns about "leaked semaphore objects" at shutdown.
        self._proc = self._conn = self._cancel_event = None

    # ------------------------------------------------------------------ calls
    def run(
        self,
        fn: Callable[..., R],
        *args: Any,
        kwargs: dict[str, Any] | None = None,
        task: TaskState | None = None,
        timeout: float | None = None,
        step: str = "working",
        models: Sequence[str | Path] = (),
    ) -> R:
        with self._lock:
            result: R = self._run(fn, args, kwargs or {}, as_task(task), timeout, step, models)  # what `fn` returned, unpickled
            return result

    def _run(
        self,
        fn: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        task: TaskState,
        timeout: float | None,
        step: str,
        models: Sequence[str | Path],
    ) -> Any:
        self.start()
        self._cancel_event.clear()
        try:
            self._conn.send(("call", fn, args, kwargs))
        except (OSError, ValueError) as e:
            self._discard()
            raise RuntimeFailure(f"could not hand step '{step}' to the worker process ({e})") from None
        t0 = time.monotonic()
        cancel_deadline = None
        while True:
            ready = wait([self._conn, self._proc.sentinel], timeout=0.05)
            if self._conn in ready:
                try:
                    msg = self._conn.recv()
                except (EOFError, OSError):
                    msg = None
                if msg is None:
                    self._proc.join(2.0)
                    raise self._died(step, models)
                kind = msg[0]
                if kind != "progress":
                    return self._reply(msg, step, models)
                if not task.cancelled:  # once cancelled, keep reading replies until the worker stops
                    try:
                        task.report(msg[1], msg[2])
                    except BaseException:
                        self._discard()
                        raise
            elif self._proc.sentinel in ready:
                self._proc.join(2.0)
                raise self._died(step, models)
            now = time.monotonic()
            if cancel_deadline is None and task.cancelled:
                self._cancel_event.set()
                cancel_deadline = now + self.grace
            if cancel_deadline is not None and now > cancel_deadline:
                self._discard()
                raise Cancelled()
            if timeout is not None and now - t0 > timeout:
                self._discard()
                err = RuntimeFailure(f"the worker did not finish step '{step}' within {timeout:g} s{describe_models(models)} (hung?); it was stopped")
                _annotate(err, step, models, "timeout")
                raise err

    def _reply(self, msg: tuple[Any, ...], step: str, models: Sequence[str | Path]) -> Any:
        kind = msg[0]
        if kind == "result":
            return msg[1]
        if kind == "cancelled":
            raise Cancelled()
        if kind == "inspector_error":
            raise _rebuild_inspector_error(*msg[1:])
        if kind == "memory":
            self._discard()  # the heap may be in a bad state after a failed allocation
            err = RuntimeFailure(f"the worker ran out of memory in step '{step}'{describe_models(models)}")
            _annotate(err, step, models, "memory")
            raise err
        err = RuntimeFailure(f"{msg[1]} (step '{step}'{describe_models(models)})")
        err.details = msg[2]  # type: ignore[attr-defined]  # an extra field of this failure only: the worker's traceback
        _annotate(err, step, models, "exception")
        raise err

    def _died(self, step: str, models: Sequence[str | Path]) -> RuntimeFailure:
        code = self._proc.exitcode if self._proc is not None else None
        self._discard()
        if code is not None and code < 0:
            sig = -code
            try:
                name = signal.Signals(sig).name
            except ValueError:
                name = f"signal {sig}"
            what = _SIGNAL_TEXT.get(sig, f"crashed (signal {name})")
            reason = name
        else:
            what, reason = f"exited unexpectedly (exit code {code})", f"exit {code}"
        err = RuntimeFailure(f"the LiteRT runtime {what}{describe_models(models)}, step '{step}'")
        _annotate(err, step, models, reason)
        return err


def _annotate(err: RuntimeFailure, step: str, models: Sequence[str | Path], reason: str) -> None:
    err.step = step  # type: ignore[attr-defined]  # a worker failure's extra field, not declared by RuntimeFailure
    err.models = tuple(str(m) for m in models)  # type: ignore[attr-defined]  # a worker failure's extra field
    err.reason = reason  # type: ignore[attr-defined]  # a worker failure's extra field


def _rebuild_inspector_error(module: str, qualname: str, message: str, path: str | None) -> InspectorError:
    try:
        cls = getattr(importlib.import_module(module), qualname)
        if isinstance(cls, type) and issubclass(cls, InspectorError):
            return cls(message, path)
    except Exception:  # noqa: BLE001 - fall back to the base class below
        pass
    return RuntimeFailure(message, path)


_default: WorkerProcess | None = None
_default_lock = threading.Lock()


def default_worker() -> WorkerProcess:
    """The process-wide worker, created on first use and closed at exit."""
    global _default
    with _default_lock:
        if _default is None:
            _default = WorkerProcess()
            atexit.register(_default.close)
        return _default


def start_default_worker(fork: bool = False, preload: Sequence[str] = ()) -> WorkerProcess:
    """Start the process-wide worker now. `fork` (a command-line process, called while it has
    one thread): import `preload` here first, then fork the worker, which starts with them."""
    w = default_worker()
    if fork and w.pid is None:
        for name in preload:
            importlib.import_module(name)
        w.fork = True
    w.start()
    return w


def close_default_worker() -> None:
    """Close the process-wide worker now, if one was started (a later call starts a new one)."""
    global _default
    with _default_lock:
        if _default is not None:
            _default.close()
            _default = None


def run_isolated(
    fn: Callable[..., R],
    *args: Any,
    kwargs: dict[str, Any] | None = None,
    task: TaskState | None = None,
    timeout: float | None = None,
    step: str = "working",
    models: Sequence[str | Path] = (),
    worker: WorkerProcess | None = None,
) -> R:
    """Run `fn(*args, task=..., **kwargs)` in a worker process and return what `fn` returns
    (typed: the result crosses the pipe pickled, as the same class); see the module doc."""
    w = worker or default_worker()
    return w.run(fn, *args, kwargs=kwargs, task=task, timeout=timeout, step=step, models=models)


@dataclass(frozen=True)
class PairJob(Generic[R]):
    """A worker-process job on a model pair and the step its failures name: calling it runs
    `fn(float_path, quant_path, *args, task=task)` through `run_isolated`. The GUI hands these to
    its Worker threads directly (no per-job wrapper functions)."""

    fn: Callable[..., R]
    step: str

    def __call__(self, float_path: str, quant_path: str, *args: Any, task: TaskState | None = None) -> R:
        return run_isolated(self.fn, float_path, quant_path, *args, task=task, step=self.step,
                            models=(float_path, quant_path))  # fmt: skip
