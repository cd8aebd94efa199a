"""Work functions for the isolation tests; top-level so the worker process can unpickle them."""

from __future__ import annotations

import ctypes
import os
import time

import numpy as np

from inspector.core.errors import InputError


def echo(value, *, task):
    return value


def pid(*, task):
    return os.getpid()


def segfault(*, task):
    task.report(0.5, "about to read address 0")
    ctypes.string_at(0)  # a genuine invalid read, like a broken kernel


def abort(*, task):
    os.abort()


def hang(*, task):
    task.report(0.0, "hanging")
    while True:  # ignores task.cancelled: only a timeout or terminate stops it
        time.sleep(0.05)


def count(n, delay, *, task):
    """Counts to n, reporting each step and honouring a cancel between steps."""
    for i in range(1, n + 1):
        task.check()
        time.sleep(delay)
        task.report(i / n, f"step {i}")
    return n * (n + 1) // 2


def wait_for_kill(*, task):
    task.report(0.0, f"pid {os.getpid()}")
    time.sleep(60)


def bad_input(path, *, task):
    raise InputError("the .npz file has no array named 'image' (found: x, y)", path)


def value_error(*, task):
    raise ValueError("something broke\nsecond line")


def allocate(nbytes, *, task):
    a = np.ones(nbytes, np.uint8)
    return int(a.sum())


def array(shape, *, task):
    return np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)


def unpicklable(*, task):
    return lambda: 1


def segfault_any(*_args, task):
    """`segfault` standing in for a job that takes positional arguments."""
    segfault(task=task)
