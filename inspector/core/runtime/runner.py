"""Run a model in the LiteRT interpreter and read back every intermediate tensor.

The model is run as a rewritten copy in which every intermediate is also a graph output (see
`tflite.rewrite`), so the chosen kernels run unchanged and each value is real:
- "optimized": the default op resolver, with the XNNPACK delegate where it applies (what a
  deployed model uses);
- "reference": `OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES`, the builtin kernels alone;
- "builtin_ref": `OpResolverType.BUILTIN_REF`, the plain reference implementations (slow; what
  the spec's integer math gives, used by `compare-runtimes`).
Optimized and builtin kernels can differ by a few quantization steps on int8 models, so every
result records which runtime produced it.

`ModelRunner.run` returns numpy *views* of the interpreter's buffers, overwritten by the next run:
copy what you keep (before a resize, the interpreter refuses to run while other views are alive).

A stateful model (`model_state`: LSTM state in variable tensors, resource variables) has its state
reset before every run, so each sample starts alike; `carry_state` (streaming) keeps it from one
run to the next, reset only by `reset_state()`.
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

import numpy as np

from inspector.core.errors import RuntimeFailure
from inspector.core.progress import TaskState, as_task
from inspector.core.runtime.model_state import model_state
from inspector.core.runtime.runtimes import RUNTIMES as RUNTIMES
from inspector.core.tflite.expose_file import expose_to_file
from inspector.core.tflite.litertlm import read_model_bytes
from inspector.core.tflite.model import Model
from inspector.core.tflite.rewrite import CACHE_MAX_BYTES, expose_intermediates, exposed_outputs

if TYPE_CHECKING:
    from ai_edge_litert.interpreter import Interpreter

# RUNTIMES is re-exported (imported `as` itself): callers import it beside the runner.
_stderr_lock = threading.Lock()

def check_runtime(runtime: str) -> None:
    if runtime not in RUNTIMES:
        raise ValueError(f"unknown runtime {runtime!r}; choose one of {', '.join(RUNTIMES)}")


def make_interpreter(
    content: bytes | str,
    model: Model,
    runtime: str = "optimized",
    num_threads: int | None = None,
    preserve_all_tensors: bool = False,
    input_shapes: Mapping[int, tuple[int, ...]] | None = None,
    label: str | None = None,
) -> Interpreter:
    """An allocated LiteRT interpreter; refusals become RuntimeFailure naming model and op.

    `content`: the model's bytes, or (a str) the path of a model file the interpreter maps.
    `input_shapes`: {input tensor: shape} set before the runtime plans the graph (delegates plan
    on the shapes they see first). `label`: what the refused model is, when it is not the
    user's file `model.path` (a model the app made): the message names it instead of the file.
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    check_runtime(runtime)
    resolver = {
        "optimized": OpResolverType.AUTO,
        "reference": OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        "builtin_ref": OpResolverType.BUILTIN_REF,
    }[runtime]
    with _captured_stderr() as captured:
        try:
            source = {"model_path": content} if isinstance(content, str) else {"model_content": content}
            it = Interpreter(
                **source,
                num_threads=num_threads,
                experimental_op_resolver_type=resolver,
                experimental_preserve_all_tensors=preserve_all_tensors,
            )
            for idx, shape in (input_shapes or {}).items():  # the wrapper's call takes the subgraph
                it._interpreter.ResizeInputTensor(idx, np.array(shape, np.int32), False, model.main.index)
            it.allocate_tensors()
            error = None
        except Exception as e:  # the wrapper raises RuntimeError/ValueError with the kernel's text
            error = e
    if error is not None:
        raise _failure(model, f"{error}\n{captured()}", label) from error
    return it


def _failure(model: Model, text: str, label: str | None) -> RuntimeFailure:
    """The refusal, naming the user's file, or (`label`) the app's own model that was refused."""
    message = _refusal_message(model, text)
    return RuntimeFailure(f"{label}: {message}") if label else RuntimeFailure(message, model.path)


@contextlib.contextmanager
def _captured_stderr() -> Iterator[Callable[[], str]]:
    """Capture what the C++ runtime writes to fd 2 ("Created XNNPACK delegate", kernel errors).

    Yields a function returning the captured text. Falls back to no capture when fd 2 cannot
    be redirected (e.g. no real stderr).
    """
    text: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):
        yield lambda: ""
        return
    with tempfile.TemporaryFile() as tmp:
        with _stderr_lock:
            os.dup2(tmp.fileno(), 2)
            try:
                yield lambda: "".join(text)
            finally:
                os.dup2(saved, 2)
                os.close(saved)
        tmp.seek(0)
        text.append(tmp.read().decode("utf-8", "replace"))


def _refusal_message(model: Model, text: str) -> str:
    custom = sorted({op.type for sg in model.subgraphs for op in sg.ops if op.is_custom})
    m = re.search(r"unresolved custom op:\s*([\w./-]+)", text, re.IGNORECASE)
    if m or (custom and "custom" in text.lower()):
        name = m.group(1).rstrip(".") if m else custom[0]
        ops = [f"op {op.index}" for op in model.main.ops if op.type == name]
        where = f" ({', '.join(ops)})" if ops else ""
        return f"the LiteRT runtime cannot run custom op '{name}'{where}: it is not built into LiteRT"
    first = text.strip().splitlines()[0] if text.strip() else "unknown error"
    m = re.search(r"Node number (\d+) \((\w+)\)", text)
    if m:
        return f"the LiteRT runtime refused op {m.group(1)} ({m.group(2)}): {first}"
    return f"the LiteRT runtime refused the model: {first}"


class ModelRunner:
    """One interpreter over a rewritten copy of `model` that exposes every intermediate tensor.

    Runs `model.main`: subgraph 0, or the chosen signature's subgraph (`Model.for_signature`),
    which is invoked by its index (the copy's signature table is emptied: its outputs changed).
    A stateful model's state is reset before every run unless `carry_state` (see the module doc).
    """

    def __init__(
        self,
        model: Model,
        runtime: str = "optimized",
        num_threads: int | None = None,
        content: bytes | None = None,
        exposed: tuple[int, ...] | None = None,
        input_shapes: Mapping[int, tuple[int, ...]] | None = None,
        label: str | None = None,
    ) -> None:
        """`content`/`exposed`: a model the app made from `model` (then `label` says what it is,
        for refusals); `input_shapes`: see `make_interpreter`."""
        self.model = model
        self.label = label
        self.runtime = runtime
        self.subgraph = model.main.index
        temp = None
        source: bytes | str  # the bytes, or the path of the file the interpreter maps
        if content is None and model.size_bytes > CACHE_MAX_BYTES:
            # Big: the copy goes to a temporary file the interpreter maps (weights are not held
            # twice in memory; over 2 GB the weights after the flatbuffer are moved, not patched).
            exposed = exposed_outputs(model.path, self.subgraph)
            source = temp = expose_to_file(model.path, self.subgraph, exposed)
        elif content is None:
            source, exposed = expose_intermediates(model.path, self.subgraph)
        else:
            source = content
        self.exposed: tuple[int, ...] = tuple(exposed or ())
        try:
            self.interpreter = make_interpreter(source, model, runtime, num_threads, input_shapes=input_shapes, label=label)
        finally:
            if temp is not None:
                os.unlink(temp)  # the interpreter's map keeps the data readable
        w = self.interpreter._interpreter  # the wrapper: every call takes a subgraph index
        if self.subgraph != 0:  # allocate_tensors() covers the primary subgraph only
            try:
                w.AllocateTensors(self.subgraph)
            except Exception as e:
                raise _failure(model, str(e), label) from e
        self.input_indices: tuple[int, ...] = tuple(int(i) for i in w.InputIndices()) if self.subgraph == 0 else model.main.inputs
        self._shapes = {i: tuple(int(s) for s in w.TensorSize(i, self.subgraph)) for i in self.input_indices}
        self._views: dict[int, np.ndarray] | None = None  # the last run's views, valid until a resize
        self.state = model_state(model)  # None: nothing persists across invoke()
        self.carry_state = False  # streaming: keep the state from one run to the next
        self._invoked = False  # the init subgraphs CALL_ONCE runs are ready once it ran

    def reset_state(self) -> None:
        """Variable tensors back to their start (zero), resource variables to their initial values
        (their init subgraphs run again); nothing to do for a model without state."""
        if self.state is None:
            return
        try:
            self._reset()
        except Exception as e:
            raise _failure(self.model, str(e), self.label) from e

    def _reset(self) -> None:
        w = self.interpreter._interpreter
        w.ResetVariableTensors()  # every subgraph's
        if self._invoked and self.state is not None:  # before the first invoke, CALL_ONCE has not run yet (and will)
            for sg in self.state.init_subgraphs:
                w.AllocateTensors(sg)  # CALL_ONCE leaves it unallocated after its run
                w.Invoke(sg)

    def run(self, feed: Mapping[int, np.ndarray]) -> dict[int, np.ndarray]:
        """Invoke once; {tensor index: view} of the inputs and every exposed tensor.

        The views are made once and handed out again while the tensors stay where they are (no
        resize): making ~100 views per run costs a tenth of a small model's inference, holding
        the GIL. Before a resize they are dropped and no other view may be alive."""
        it, sg = self.interpreter, self.subgraph
        resize = [idx for idx, value in feed.items() if self._shapes.get(idx) != tuple(value.shape)]
        if resize or self._views is None:
            self._views = None
            try:
                it._ensure_safe()  # no views of the last run may be alive (buffers move on resize)
            except RuntimeError as e:
                raise RuntimeFailure(f"internal error: {e}", self.model.path) from e
        w = it._interpreter  # the wrapper: every call takes a subgraph index; views use it as base
        try:
            for idx in resize:
                # Dynamic dimensions (-1 in shape_signature) take the sample's size.
                shape = tuple(feed[idx].shape)
                w.ResizeInputTensor(idx, np.array(shape, np.int32), False, sg)
                self._shapes[idx] = shape
            if resize:
                w.AllocateTensors(sg)
            for idx, value in feed.items():
                w.SetTensor(idx, value, sg)
            if self.state is not None and not self.carry_state:
                self._reset()  # each sample starts from the same state
            w.Invoke(sg)
            self._invoked = True
        except Exception as e:
            raise _failure(self.model, str(e), self.label) from e
        if self._views is None or any(idx not in self._views for idx in feed):
            views = {i: w.tensor(w, i, sg) for i in self.exposed}
            for idx in feed:
                views[idx] = w.tensor(w, idx, sg)
            self._views = views
        return dict(self._views)

    def describe(self) -> str:
        return RUNTIMES[self.runtime]


def preserved_values(model: Model, feed: Mapping[int, np.ndarray], runtime: str = "reference") -> dict[int, np.ndarray]:
    """Every tensor of the unmodified model via `experimental_preserve_all_tensors` (for checks).

    The interpreter applies no default delegate in this mode, so use it with "reference".
    """
    content = bytes(read_model_bytes(model.path))
    it = make_interpreter(content, model, runtime, preserve_all_tensors=True)
    for idx, value in feed.items():
        it.set_tensor(idx, value)
    it.invoke()
    out = {}
    for t in model.main.tensors:
        if t.dtype in ("string", "resource", "variant"):
            continue
        try:
            out[t.index] = np.array(it.get_tensor(t.index))
        except ValueError:  # tensors without data (e.g. omitted)
            continue
    return out


def iterate(
    runner: ModelRunner,
    feeds: Iterator[Mapping[int, np.ndarray]],
    total: int | None = None,
    task: TaskState | None = None,
) -> Iterator[dict[int, np.ndarray]]:
    """Run sample after sample; yields views valid until the next step. Raises Cancelled."""
    task = as_task(task)
    done = 0
    for feed in feeds:
        task.check()
        values = runner.run(feed)
        yield values
        del values
        done += 1
        task.report(done / total if total else None, f"sample {done}" + (f" of {total}" if total else ""))
