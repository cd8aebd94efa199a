"""`tflite-inspector --self-test`: prove that an installation (or the frozen bundle) works.

Opens the bundled example pair, runs a short comparison and a requantization, renders the main
window offscreen, and returns 0 only if every step worked.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from inspector import __version__
from inspector.paths import example_inputs, example_pair


def _step(name: str, fn: Callable[[], str]) -> bool:
    t0 = time.perf_counter()
    try:
        detail = fn()
    except Exception as e:  # the self-test reports every failure and goes on
        print(f"FAIL  {name}: {type(e).__name__}: {e}")
        if os.environ.get("TFLITE_INSPECTOR_DEBUG"):
            traceback.print_exc()
        return False
    print(f"ok    {name} ({time.perf_counter() - t0:.2f} s){': ' + detail if detail else ''}")
    return True


def _examples_present() -> str:
    missing = [str(p) for p in (*example_pair(), example_inputs()) if not p.exists()]
    if missing:
        raise FileNotFoundError(", ".join(missing))
    return ", ".join(p.name for p in (*example_pair(), example_inputs()))


def _open_models() -> str:
    from inspector.core.tflite.model import Model

    f, q = example_pair()
    mf, mq = Model(f), Model(q)
    nq = sum(1 for t in mq.main.tensors if t.quantization)
    if not nq:
        raise RuntimeError(f"{q} has no quantized tensors")
    return f"{len(mf.main.ops)} + {len(mq.main.ops)} ops, {nq} quantized tensors"


def _interpreter() -> str:
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    _, q = example_pair()
    it = Interpreter(model_path=str(q))
    it.allocate_tensors()
    d = it.get_input_details()[0]
    it.set_tensor(d["index"], np.zeros(d["shape"], d["dtype"]))
    it.invoke()
    return "LiteRT interpreter invoked the int8 example"


def _compare() -> str:
    from inspector.core.compare.comparison import CompareOptions
    from inspector.core.compare.in_worker import compare_in_worker
    from inspector.core.samples.settings import SampleSettings

    f, q = example_pair()  # in a worker process, as the app runs it
    res = compare_in_worker(str(f), str(q), CompareOptions(samples=SampleSettings(2, seed=0)), timeout=120).to_json()
    if not res["layers"]:
        raise RuntimeError("the comparison found no layers")
    out = res["outputs"][0]["metrics"]["sqnr_db"]
    return f"{len(res['layers'])} layers, output SQNR {out:.1f} dB" if out is not None else f"{len(res['layers'])} layers"


def _requantize() -> str:
    from ai_edge_litert.interpreter import Interpreter

    from inspector.core.requantize.plan import Override, Plan
    from inspector.core.requantize.quantizer_route import requantize, save_model
    from inspector.core.samples.settings import SampleSettings

    f, _ = example_pair()
    plan = Plan(base="int8", overrides=(Override("op:8", "keep_float"),))  # the logits
    res = requantize(str(f), plan, sample_settings=SampleSettings(2, seed=0))
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "requantized.tflite"
        save_model(res, out)
        it = Interpreter(model_path=str(out))
        it.allocate_tensors()
        it.invoke()
        return f"{out.stat().st_size:,} bytes written and run, {len(res.notes)} notes"


def _gui() -> str:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen" if not os.environ.get("DISPLAY") else "")
    if not os.environ["QT_QPA_PLATFORM"]:
        del os.environ["QT_QPA_PLATFORM"]
    from inspector.gui.app import render_self_test

    f, q = example_pair()
    w, h, colours = render_self_test(str(f), str(q))
    if colours < 20:
        raise RuntimeError(f"the main window rendered blank ({colours} colours)")
    return f"main window rendered at {w}x{h}"


def run_self_test() -> int:
    from inspector.core.runtime.delegate_notice import swallow

    swallow()  # this process runs LiteRT too: its XNNPACK start-up line stays off the terminal
    print(f"tflite-inspector {__version__} self-test (python {sys.version.split()[0]})")
    f, q = example_pair()
    steps = [
        ("example models present", _examples_present),
        ("read both models", _open_models),
        ("LiteRT interpreter", _interpreter),
        ("short comparison", _compare),
        ("requantize", _requantize),
        ("main window offscreen", _gui),
    ]
    ok = [_step(name, fn) for name, fn in steps]
    passed = sum(ok)
    print(f"{passed} passed, {len(ok) - passed} failed")
    return 0 if all(ok) else 1
