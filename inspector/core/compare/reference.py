"""What model B was measured against, said in every view (plot title, CLI, report, Keras tab).

Three references exist for the same layer of a QAT model: the Keras model itself (its layers'
fake-quantized outputs, run in TensorFlow: the QAT simulation), its float twin in TFLite form
(which keeps each fake quant as QUANTIZE → DEQUANTIZE: B's tensors pair with the value after
that pair), and a plain float model (no fake quant: B's rounding shows as error). Their texts
live here so the views say it the same way.
"""

from __future__ import annotations

from pathlib import Path

from inspector.core.compare.pairing import Pairing
from inspector.core.tflite.fake_quant import fake_quant_before
from inspector.core.tflite.model import Model


def fake_quant_paired(fm: Model, pairing: Pairing) -> int:
    """B's tensors paired with a fake quant's output in A (activations, not kernels)."""
    sg = fm.main
    producers, consumers = sg.producers(), sg.consumers()
    n = 0
    for p in pairing.tensors:
        fq = fake_quant_before(sg, p.float_tensor, producers, consumers)
        if fq is not None and not sg.tensors[fq.source].is_constant:
            n += 1
    return n


def twin_reference(fm: Model, pairing: Pairing) -> str:
    """'' for a plain float model A; for a float twin with fake quantization, what B's tensors
    were compared with."""
    n = fake_quant_paired(fm, pairing)
    if not n:
        return ""
    return (f"the float twin {Path(fm.path).name} after its fake quant (QUANTIZE → DEQUANTIZE) at {n} "
            "tensors: the QAT simulation as converted to TFLite")


def keras_reference(model_path: str, qat: bool) -> str:
    name = Path(str(model_path).rstrip("/")).name
    if qat:
        return f"the Keras simulation: {name}'s fake-quantized layer outputs, run in TensorFlow"
    return f"the Keras model {name}'s float layer outputs, run in TensorFlow"
