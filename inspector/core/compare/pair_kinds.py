"""Is model A a float model and model B quantized? The pair check's first question.

A comparison measures B's quantization against A's float values; a pair that is not a float model
and a quantized one gives numbers that look like findings and mean nothing (a quantized model
compared with itself read −0.02 to 0.41 dB per layer, 95-100 % clipping and nine 'clipping →
recalibrate' causes). Refused, each with one reason:
- the same model twice (the same file, or the same bytes);
- A computes on integers (an op other than QUANTIZE / DEQUANTIZE writes an integer-quantized
  tensor): two quantized models. A QAT model's float twin is float here: its integers are only the
  QUANTIZE → DEQUANTIZE pairs of its fake quantization;
- B holds nothing quantized (no integer-quantized tensor, no float16 tensor): two float models.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from inspector.core.tflite.dtypes import INT_LIMITS
from inspector.core.tflite.model import Model, Subgraph
from inspector.core.tflite.op_facts import BOUNDARY_OPS


def computes_on_integers(sg: Subgraph) -> bool:
    """An op other than QUANTIZE / DEQUANTIZE writes an integer-quantized tensor."""
    for op in sg.ops:
        if op.type in BOUNDARY_OPS:
            continue
        for o in op.outputs:
            t = sg.tensors[o] if o >= 0 else None
            if t is not None and t.dtype in INT_LIMITS and t.quantization is not None:
                return True
    return False


def holds_quantization(model: Model) -> bool:
    """Any integer-quantized or float16 tensor, in any subgraph."""
    return any((t.dtype in INT_LIMITS and t.quantization is not None) or t.dtype == "float16"
               for sg in model.subgraphs for t in sg.tensors)  # fmt: skip


def same_model(a: Model, b: Model) -> bool:
    """The same file, or two files of the same bytes."""
    try:
        if os.path.samefile(a.path, b.path):
            return True
        if os.path.getsize(a.path) != os.path.getsize(b.path):
            return False
        return _digest(a.path) == _digest(b.path)
    except OSError:
        return False


def _digest(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def kind_reasons(a: Model, b: Model) -> list[str]:
    """Why A and B (A meant float, B quantized, after any swap) are not such a pair; [] when they are."""
    na, nb = Path(a.path).name, Path(b.path).name
    if same_model(a, b):
        return [f"{na} and {nb} are the same model; compare a float model with its quantized twin"]
    if computes_on_integers(a.main):
        return [f"{na} is a quantized model too (its ops compute on integers), not the float model of {nb}"]
    if not holds_quantization(b):
        return [f"neither model is quantized ({nb} computes in float like {na}): nothing to measure"]
    return []
