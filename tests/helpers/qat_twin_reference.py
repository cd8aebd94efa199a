"""Independent references for the QAT twin tests (issue 26): the MLP's FULLY_CONNECTED kernels
read with the `tflite` package alone, and the step errors between a float twin's fake-quantized
kernels and an int8 export's kernels."""

from __future__ import annotations

import numpy as np
import tflite

FC = ("quant_dense_1", "quant_dense_2", "quant_probs")


def fc_kernels(path) -> dict[str, tuple[np.ndarray, float, int]]:
    """Layer -> (kernel values as stored, scale, zero point) of each FULLY_CONNECTED's input 1, read
    with the `tflite` package; in the float twin the kernel is the constant behind QUANTIZE →
    DEQUANTIZE, with the QUANTIZE output's scale and zero point."""
    m = tflite.Model.GetRootAsModel(bytearray(open(path, "rb").read()), 0)
    sg = m.Subgraphs(0)
    producer = {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        for k in range(op.OutputsLength()):
            producer[op.Outputs(k)] = op
    codes = [max(m.OperatorCodes(i).BuiltinCode(), m.OperatorCodes(i).DeprecatedBuiltinCode()) for i in range(m.OperatorCodesLength())]

    def data(t):
        tensor = sg.Tensors(t)
        raw = m.Buffers(tensor.Buffer()).DataAsNumpy()
        dtype = {tflite.TensorType.FLOAT32: np.float32, tflite.TensorType.INT8: np.int8}[tensor.Type()]
        return np.frombuffer(raw.tobytes(), dtype).reshape(tensor.ShapeAsNumpy())

    out = {}
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        if codes[op.OpcodeIndex()] != tflite.BuiltinOperator.FULLY_CONNECTED:
            continue
        t = op.Inputs(1)
        layer = next(n for n in FC if f"/{n}/" in sg.Tensors(t).Name().decode())
        q = sg.Tensors(t).Quantization()
        if q is not None and q.ScaleLength():  # the int8 export: the kernel itself
            out[layer] = (data(t), float(q.ScaleAsNumpy()[0]), int(q.ZeroPointAsNumpy()[0]))
            continue
        dq = producer[t]  # DEQUANTIZE <- QUANTIZE <- constant
        quant = producer[dq.Inputs(0)]
        qt = sg.Tensors(quant.Outputs(0)).Quantization()
        out[layer] = (data(quant.Inputs(0)), float(qt.ScaleAsNumpy()[0]), int(qt.ZeroPointAsNumpy()[0]))
    return out


def kernel_steps(twin_path, export) -> np.ndarray:
    """|fake-quantized A kernel − dequantized B kernel| in B's steps, over the three kernels."""
    a, b = fc_kernels(twin_path), fc_kernels(export)
    errs = []
    for layer in FC:
        k, s, z = a[layer]
        fq = (np.clip(np.round(k.astype(np.float64) / s) + z, 0, 255) - z) * s  # uint8 fake quant, as the twin stores it
        q, sb, zb = b[layer]
        errs.append(np.abs(fq - (q.astype(np.float64) - zb) * sb).reshape(-1) / sb)
    return np.concatenate(errs)
