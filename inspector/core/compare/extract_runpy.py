"""The run.py written beside an extracted op: it needs only numpy and ai-edge-litert (or
tensorflow), so a kernel maintainer can run it without this tool."""

RUN_PY = '''"""Run the extracted op on the LiteRT reference kernels and on XNNPACK; print the differences
from the full model's values (expected.npz) in LSB (steps of each output's scale).
Needs numpy and ai-edge-litert (or tensorflow). Usage: python run.py"""
import os

import numpy as np

try:
    from ai_edge_litert.interpreter import Interpreter, OpResolverType
except ImportError:
    from tensorflow.lite.python.interpreter import Interpreter, OpResolverType

HERE = os.path.dirname(os.path.abspath(__file__))
inputs = dict(np.load(os.path.join(HERE, "inputs.npz")))
expected = dict(np.load(os.path.join(HERE, "expected.npz")))


def run(resolver):
    it = Interpreter(model_path=os.path.join(HERE, "model.tflite"), experimental_op_resolver_type=resolver, num_threads=1)
    it.allocate_tensors()
    n = len(next(iter(inputs.values()))) if inputs else 1
    out = {}
    for s in range(n):
        for d in it.get_input_details():
            it.set_tensor(d["index"], inputs[d["name"]][s])
        it.reset_all_variables()  # a stateful op (LSTM) starts every sample from its reset state
        it.invoke()
        for d in it.get_output_details():
            scale = d["quantization"][0] or 1.0
            out.setdefault(d["name"], ([], scale))[0].append(it.get_tensor(d["index"]).astype(np.float64))
    return {k: (np.stack(v), s) for k, (v, s) in out.items()}


ref = run(OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
xnn = run(OpResolverType.AUTO)
for name, (r, scale) in ref.items():
    e = expected[name].astype(np.float64)
    x = xnn[name][0]
    integer = np.issubdtype(expected[name].dtype, np.integer)
    lsb = 1.0 if integer else scale
    print(f"{name}: reference vs expected max {np.abs(r - e).max() / lsb:g} LSB; "
          f"XNNPACK vs expected max {np.abs(x - e).max() / lsb:g} LSB "
          f"({np.mean(x != e) * 100:.2f}% of values differ)")
    if "float:" + name in expected and integer:
        print(f"  (float op output saved as 'float:{name}' in expected.npz)")
'''
