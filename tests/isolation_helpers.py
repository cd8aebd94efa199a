"""Work functions for the isolation tests; top-level so the worker process can unpickle them."""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from inspector.core.errors import Cancelled, InputError


def echo(value, *, progress, cancel):
    return value


def pid(*, progress, cancel):
    return os.getpid()


def segfault(*, progress, cancel):
    progress(1, 2, "about to read address 0")
    ctypes.string_at(0)  # a genuine invalid read, like a broken kernel


def abort(*, progress, cancel):
    os.abort()


def hang(*, progress, cancel):
    progress(0, 1, "hanging")
    while True:  # ignores cancel(): only a timeout or terminate stops it
        time.sleep(0.05)


def count(n, delay, *, progress, cancel):
    """Counts to n, reporting each step and honouring cancel() between steps."""
    for i in range(1, n + 1):
        if cancel():
            raise Cancelled()
        time.sleep(delay)
        progress(i, n, f"step {i}")
    return n * (n + 1) // 2


def wait_for_kill(*, progress, cancel):
    progress(0, 1, f"pid {os.getpid()}")
    time.sleep(60)


def bad_input(path, *, progress, cancel):
    raise InputError("the .npz file has no array named 'image' (found: x, y)", path)


def value_error(*, progress, cancel):
    raise ValueError("something broke\nsecond line")


def allocate(nbytes, *, progress, cancel):
    a = np.ones(nbytes, np.uint8)
    return int(a.sum())


def array(shape, *, progress, cancel):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def unpicklable(*, progress, cancel):
    return lambda: 1


def segfault_any(*_args, progress, cancel):
    """`segfault` standing in for a job that takes positional arguments."""
    segfault(progress=progress, cancel=cancel)
