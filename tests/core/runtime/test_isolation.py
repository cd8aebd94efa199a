"""Worker-process isolation: crashes, kills, hangs and errors become clean exceptions."""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from inspector.core.errors import Cancelled, InputError, RuntimeFailure
from inspector.core.progress import TaskState
from inspector.core.runtime.probe import probe_model
from inspector.core.runtime.worker import WorkerProcess, run_isolated
from inspector.core.samples.settings import SampleSettings
from tests.helpers import isolation_helpers as h


@pytest.fixture(scope="module")
def worker():
    w = WorkerProcess(grace=0.5)
    yield w
    w.close()


def test_result_and_reuse(worker):
    assert worker.run(h.echo, {"a": [1, 2]}) == {"a": [1, 2]}
    first = worker.run(h.pid)
    assert first != os.getpid()
    assert worker.run(h.pid) == first  # a healthy worker is reused


def test_segfault_is_reported_and_next_call_gets_a_fresh_worker(worker):
    before = worker.run(h.pid)
    starts = worker.starts
    with pytest.raises(RuntimeFailure) as ei:
        worker.run(h.segfault, step="running samples", models=("float.tflite", "int8.tflite"))
    assert str(ei.value) == (
        "the LiteRT runtime crashed (signal SIGSEGV: segmentation fault) while running models "
        "float.tflite and int8.tflite, step 'running samples'"
    )
    assert ei.value.reason == "SIGSEGV" and ei.value.step == "running samples"
    after = worker.run(h.pid)
    assert after != before and worker.starts == starts + 1


def test_abort(worker):
    with pytest.raises(RuntimeFailure, match=r"aborted \(signal SIGABRT\) while running model m.tflite, step 'calibrating'"):
        worker.run(h.abort, step="calibrating", models=("m.tflite",))
    assert worker.run(h.echo, 5) == 5


def test_sigkill_from_outside_mid_run(worker):
    seen = []

    def on_progress(fraction, message):
        seen.append(message)
        os.kill(int(message.split()[1]), signal.SIGKILL)  # like the kernel's OOM killer

    t0 = time.monotonic()
    with pytest.raises(RuntimeFailure) as ei:
        worker.run(h.wait_for_kill, task=TaskState(on_progress), step="running samples", models=("big.tflite",))
    assert "was killed (signal SIGKILL; the system may have run out of memory) while running model big.tflite" in str(ei.value)
    assert len(seen) == 1 and time.monotonic() - t0 < 10
    assert worker.run(h.echo, "alive") == "alive"


def test_hang_past_timeout(worker):
    t0 = time.monotonic()
    with pytest.raises(RuntimeFailure) as ei:
        worker.run(h.hang, timeout=0.7, step="requantize validation", models=("q.tflite",))
    elapsed = time.monotonic() - t0
    assert 0.7 <= elapsed < 5
    assert str(ei.value) == (
        "the worker did not finish step 'requantize validation' within 0.7 s while running model q.tflite (hung?); it was stopped"
    )
    assert worker.run(h.echo, 1) == 1


def test_inspector_error_keeps_type_message_and_path(worker):
    with pytest.raises(InputError) as ei:
        worker.run(h.bad_input, "/data/inputs.npz")
    assert type(ei.value) is InputError
    assert ei.value.path == "/data/inputs.npz"
    assert ei.value.message == "the .npz file has no array named 'image' (found: x, y)"
    assert worker.run(h.echo, 2) == 2  # an ordinary error does not cost the worker


def test_other_exception_is_one_line_with_details(worker):
    with pytest.raises(RuntimeFailure) as ei:
        worker.run(h.value_error, step="running samples", models=("a.tflite",))
    assert str(ei.value) == "something broke (step 'running samples' while running model a.tflite)"
    assert "Traceback" in ei.value.details and "value_error" in ei.value.details


def test_unpicklable_result(worker):
    with pytest.raises(RuntimeFailure, match="the result could not be sent back"):
        worker.run(h.unpicklable)


def test_progress_in_order_and_result(worker):
    got = []
    assert worker.run(h.count, 20, 0.0, task=TaskState(lambda f, m: got.append((f, m)))) == 210
    assert got == [(i / 20, f"step {i}") for i in range(1, 21)]


def test_cooperative_cancel_keeps_worker(worker):
    got = []
    pid = worker.run(h.pid)
    with pytest.raises(Cancelled):
        worker.run(h.count, 1000, 0.01, task=TaskState(lambda f, m: got.append(f), lambda: len(got) >= 5))
    assert 5 <= len(got) < 50
    assert got == [i / 1000 for i in range(1, len(got) + 1)]
    assert worker.run(h.pid) == pid  # it stopped by itself: no restart needed


def test_cancel_of_uncooperative_work_terminates_after_grace(worker):
    flag = threading.Event()
    threading.Timer(0.3, flag.set).start()
    starts = worker.starts
    t0 = time.monotonic()
    with pytest.raises(Cancelled):
        worker.run(h.hang, task=TaskState(is_cancelled=flag.is_set))
    assert 0.3 + worker.grace <= time.monotonic() - t0 < 5
    assert worker.run(h.echo, 3) == 3 and worker.starts == starts + 1


def test_out_of_memory_with_limit():
    w = WorkerProcess(memory_limit=1 << 30)
    try:
        assert w.run(h.allocate, 10_000_000) == 10_000_000
        with pytest.raises(RuntimeFailure) as ei:
            w.run(h.allocate, 4 << 30, step="running samples", models=("big.tflite",))
        assert str(ei.value) == "the worker ran out of memory in step 'running samples' while running model big.tflite"
        assert ei.value.reason == "memory"
    finally:
        w.close()


def test_arrays_come_back_intact(worker):
    a = worker.run(h.array, (8, 32, 32, 16))
    np.testing.assert_array_equal(a, np.arange(8 * 32 * 32 * 16, dtype=np.float32).reshape(8, 32, 32, 16))


def test_custom_op_model_fails_cleanly_naming_the_op(fixture_path, worker):
    path = str(fixture_path("custom_op"))
    with pytest.raises(RuntimeFailure) as ei:
        worker.run(probe_model, path, step="checking the model runs", models=(path,))
    assert ei.value.path == path
    assert ei.value.message == "the model uses the custom op 'MyCustomSoftmax' (op 12), which the LiteRT runtime does not provide"
    ok = worker.run(probe_model, str(fixture_path("int8")))
    assert ok["inputs"][0]["shape"] == [1, 32, 32, 3] and ok["outputs"][0]["shape"] == [1, 10]


def test_run_isolated_default_worker():
    assert run_isolated(h.count, 3, 0.0) == 6
    assert run_isolated(h.pid) != os.getpid()


def test_runtime_error_explanations():
    from inspector.core.runtime.probe import explain_runtime_error

    assert explain_runtime_error(RuntimeError(
        "tensorflow/lite/kernels/conv.cc:390 affine_quantization->zero_point->size != 1 (2 != 1)Node number 5 (CONV_2D) failed to prepare.\n"
    )) == ("op 5 (CONV_2D) failed to prepare: tensorflow/lite/kernels/conv.cc:390 "
           "affine_quantization->zero_point->size != 1 (2 != 1)Node number 5 (CONV_2D) failed to prepare.")
    assert explain_runtime_error(ValueError("Didn't find op for builtin opcode 'CONV_2D' version '99'. An older version")) == (
        "the LiteRT runtime has no kernel for CONV_2D version 99"
    )
    assert explain_runtime_error(UnicodeDecodeError("utf-8", b"\xfeab", 0, 1, "invalid start byte")) == (
        "a tensor or signature name in the model is not valid UTF-8 text (byte b'\\xfe')"
    )
    assert explain_runtime_error(TypeError("bad")) == "TypeError: bad"


def test_compare_isolated_equals_in_process(example_pair, worker):
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.compare.in_worker import compare_in_worker

    f, q = map(str, example_pair)
    opts = CompareOptions(samples=SampleSettings(count=3, seed=1))
    seen = []
    iso = compare_in_worker(f, q, opts, task=TaskState(lambda fr, m: seen.append((fr, m))), worker=worker)
    ref = compare_models(f, q, opts)
    assert seen == [(1 / 3, "sample 1 of 3"), (2 / 3, "sample 2 of 3"), (1.0, "sample 3 of 3")]
    assert iso.samples == ref.samples == 3 and len(iso.layers) == len(ref.layers) > 5
    for a, b in zip(iso.layers, ref.layers, strict=True):
        assert a.tensor_name == b.tensor_name
        assert a.metrics.mse == pytest.approx(b.metrics.mse, rel=1e-9, abs=1e-15)


def test_compare_isolated_bad_model_keeps_its_error_type(tmp_path, example_pair, worker):
    from inspector.core.compare.in_worker import compare_in_worker
    from inspector.core.errors import ModelFormatError

    bad = tmp_path / "bad.tflite"
    bad.write_bytes(example_pair[1].read_bytes()[:5000])
    with pytest.raises(ModelFormatError) as ei:
        compare_in_worker(example_pair[0], bad, worker=worker)
    assert ei.value.path == str(bad) and "past the end of the file" in ei.value.message


def test_probe_validates_before_the_runtime_sees_the_file(tmp_path, fixture_path, worker):
    from inspector.core.errors import ModelFormatError

    bad = tmp_path / "bad.tflite"
    data = bytearray(fixture_path("int8").read_bytes())
    data[4:8] = b"XXXX"
    bad.write_bytes(bytes(data))
    with pytest.raises(ModelFormatError, match="expected the identifier 'TFL3'"):
        worker.run(probe_model, str(bad))
