"""Independent references the tests compare against: LiteRT's own values and the plain SQNR.

Kept apart from `inspector` on purpose: these are what the app's numbers are checked with.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np


def preserving_interpreter(path: str | Path):
    """An interpreter on the reference kernels that keeps every intermediate tensor."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(
        model_path=str(path),
        experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES,
        experimental_preserve_all_tensors=True,
    )
    it.allocate_tensors()
    return it


def output_rows(data: bytes, images: np.ndarray, resolver=None) -> np.ndarray:
    """The first output of a one-input model, one image at a time, as float64 rows."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    rt = OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES if resolver is None else resolver
    it = Interpreter(model_content=data, experimental_op_resolver_type=rt, num_threads=1)
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    rows = []
    for i in range(len(images)):
        it.set_tensor(inp["index"], images[i : i + 1])
        it.invoke()
        rows.append(it.get_tensor(out["index"]).astype(np.float64))
    return np.concatenate(rows)


def sqnr_db(x: np.ndarray, y: np.ndarray) -> float:
    """10 log10(sum x^2 / sum (x - y)^2) in float64; +inf when y equals x."""
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    err = float(np.sum((x - y) ** 2))
    return math.inf if err == 0 else 10 * math.log10(float(np.sum(x**2)) / err)


def model_outputs(model: bytes | str | Path, images: np.ndarray) -> np.ndarray:
    """LiteRT's first output per image, flattened: (images, values). A quantized input gets the
    image quantized with that input's own parameters (read from the interpreter), a quantized
    output is dequantized with its own."""
    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_content=model) if isinstance(model, bytes) else Interpreter(model_path=str(model))
    it.allocate_tensors()
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    ys = []
    for img in images:
        x = img[None].astype(np.float32)
        if inp["dtype"] != np.float32:
            s, z = inp["quantization"]
            info = np.iinfo(inp["dtype"])
            x = np.clip(np.round(x / s) + z, info.min, info.max).astype(inp["dtype"])
        it.set_tensor(inp["index"], x)
        it.invoke()
        y = np.array(it.get_tensor(out["index"]), np.float64)
        if out["dtype"] != np.float32:
            s, z = out["quantization"]
            y = (y - z) * s
        ys.append(y.reshape(-1))
    return np.stack(ys)
