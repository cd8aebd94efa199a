"""LiteRT runtime errors in one line, and a probe: can the runtime run this model at all?

The interpreter's messages are several lines with a URL in the middle; a user needs the
cause ("the model uses the custom op 'X' that this runtime does not provide").
`probe_model` is meant to run inside an isolated worker (see `runtime.worker`).
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from inspector.core.errors import RuntimeFailure
from inspector.core.progress import TaskState, as_task

_CUSTOM = re.compile(r"unresolved custom op: ([^\s.]+(?:\.[^\s.]+)*)\.?")
_NODE = re.compile(r"Node number (\d+) \(([^)]*)\) failed to (prepare|invoke)")
_UNSUPPORTED = re.compile(r"Didn't find op for builtin opcode '([^']+)' version '(\d+)'")


def explain_runtime_error(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):  # the interpreter wrapper decodes tensor/signature names
        return f"a tensor or signature name in the model is not valid UTF-8 text (byte {exc.object[exc.start:exc.start + 1]!r})"
    text = str(exc)
    m = _CUSTOM.search(text)
    if m:
        node = _NODE.search(text)
        where = f" (op {node.group(1)})" if node else ""
        return f"the model uses the custom op '{m.group(1)}'{where}, which the LiteRT runtime does not provide"
    m = _UNSUPPORTED.search(text)
    if m:
        return f"the LiteRT runtime has no kernel for {m.group(1)} version {m.group(2)}"
    node = _NODE.search(text)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("See instructions")]
    first = lines[0] if lines else type(exc).__name__
    if node:
        first = f"op {node.group(1)} ({node.group(2)}) failed to {node.group(3)}: {first}"
    return f"{type(exc).__name__}: {first}" if not isinstance(exc, RuntimeError | ValueError) else first


def probe_model(
    path: str,
    *,
    task: TaskState | None = None,
) -> dict[str, Any]:
    """Validate `path`, load it in LiteRT, allocate, run once on zeros; describe inputs and outputs."""
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.tflite.model import Model

    Model(str(path)).close()  # structural checks first: the runtime never sees a malformed file
    task = as_task(task)
    task.report(0.0, "loading")
    try:
        interp = Interpreter(model_path=str(path))
        interp.allocate_tensors()
        task.report(0.5, "running once")
        for d in interp.get_input_details():
            interp.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
        interp.invoke()
    except (RuntimeError, ValueError) as e:
        raise RuntimeFailure(explain_runtime_error(e), str(path)) from None
    task.report(1.0, "done")

    def desc(ds: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [{"name": d["name"], "shape": [int(x) for x in d["shape"]], "dtype": np.dtype(d["dtype"]).name} for d in ds]

    return {"inputs": desc(interp.get_input_details()), "outputs": desc(interp.get_output_details())}
