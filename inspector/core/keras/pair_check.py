"""Is this TFLite model an export of this Keras model? The pair check of `.tflite` twins
(`compare.pair_check`), run on the Keras model's float twin (made once, cached: `for_view`).

The float twin of a QAT model keeps each kernel's fake quant (QUANTIZE → DEQUANTIZE), so B's
kernels are measured against the QAT model's fake-quantized kernels (a faithful export is 0
steps away; another training of the same architecture tens of steps); a float Keras model's
kernels are its float weights. Inputs and outputs must correspond too. Runs in the worker
process (TensorFlow makes the twin the first time).
"""

from __future__ import annotations

import os

from inspector.core.compare.pair_check import PairCheck, check_pair
from inspector.core.keras.for_view import cached_twins
from inspector.core.progress import TaskState, as_task
from inspector.core.tflite.model import load_model
from inspector.core.tflite.signatures import select_signature


def keras_pair_check(model_path: str, quant_path: str, signature: str | None = None,
                     cache_root: str | os.PathLike[str] | None = None, task: TaskState | None = None) -> tuple[PairCheck, str]:
    """(the pair check of the Keras model's float twin against B, the float twin's path)."""
    task = as_task(task)
    task.report(None, "making the float twin (importing TensorFlow) to check the pair")
    twin = cached_twins(str(model_path), cache_root, task)["float"]
    a = select_signature(load_model(twin), signature)
    b = select_signature(load_model(str(quant_path)), signature)
    return check_pair(a, b), twin
