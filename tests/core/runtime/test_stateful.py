"""Stateful models (issue 34 §1): a tf_keras LSTM (fused UNIDIRECTIONAL_SEQUENCE_LSTM, its state in
variable tensors) and a resource-variable model keep state across invoke(). Every sample starts
from a reset state (the comparison equals numpy on LiteRT with `reset_all_variables()` before each
sample, and differs from the same run without it: the bug); `--stateful` runs one stream (equal to
numpy on one interpreter, samples in order, never reset after the start)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.compare.comparison import compare_models
from inspector.core.compare.options import CompareOptions
from inspector.core.runtime.runner import ModelRunner
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO
from tests.helpers.stateful_fixtures import stateful_fixture_dir


@pytest.fixture(scope="module")
def lstm() -> dict:
    d = stateful_fixture_dir(REPO / ".fixture-cache")
    return {"float": d / "lstm_float.tflite", "int8": d / "lstm_int8.tflite", "inputs": d / "lstm_inputs.npz",
            "counter": d / "counter.tflite"}  # fmt: skip


def _sqnr(x: np.ndarray, y: np.ndarray) -> float:
    return float(10 * np.log10(np.sum(x.astype(np.float64) ** 2) / np.sum((x.astype(np.float64) - y) ** 2)))


def _litert(path, seqs: np.ndarray, reset: bool) -> tuple[np.ndarray, np.ndarray]:
    """(LSTM output, model output) of every sample, dequantized: LiteRT's reference kernels with every
    tensor preserved, `reset_all_variables()` before each sample when `reset`."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    it = Interpreter(model_path=str(path), experimental_preserve_all_tensors=True,
                     experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)  # fmt: skip
    it.allocate_tensors()
    lstm_out = next(op["outputs"][0] for op in it._get_ops_details() if op["op_name"] == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    detail = next(d for d in it.get_tensor_details() if d["index"] == lstm_out)
    scale, zero = detail["quantization"]
    inp, out = it.get_input_details()[0], it.get_output_details()[0]
    lstm_values, outputs = [], []
    for s in seqs:
        if reset:
            it.reset_all_variables()
        it.set_tensor(inp["index"], s[None])
        it.invoke()
        v = it.get_tensor(lstm_out).astype(np.float64)
        lstm_values.append(scale * (v - zero) if scale else v)
        outputs.append(it.get_tensor(out["index"]).astype(np.float64))
    return np.stack(lstm_values), np.concatenate(outputs)


def _reference(lstm: dict, reset: bool) -> dict:
    data = np.load(lstm["inputs"])
    fl, fo = _litert(lstm["float"], data["seq"], reset)
    ql, qo = _litert(lstm["int8"], data["seq"], reset)
    labels = data["labels"]
    return {"lstm": _sqnr(fl, ql), "output": _sqnr(fo, qo),
            "acc_float": float(np.mean(fo.argmax(1) == labels)), "acc_int8": float(np.mean(qo.argmax(1) == labels))}  # fmt: skip


def _compare(lstm: dict, carry: bool = False, threads: int = 2):
    settings = SampleSettings(count=ALL, source=str(lstm["inputs"]), carry_state=carry)
    return compare_models(str(lstm["float"]), str(lstm["int8"]), CompareOptions(samples=settings, runtime="reference", threads=threads))


def _figures(result) -> dict:
    layer = next(x for x in result.layers if x.op_type == "UNIDIRECTIONAL_SEQUENCE_LSTM")
    task = result.task()
    return {"lstm": layer.metrics.sqnr_db, "output": result.outputs[0].metrics.sqnr_db,
            "acc_float": task.float_accuracy, "acc_int8": task.quant_accuracy}  # fmt: skip


def test_every_sample_starts_from_a_reset_state(lstm):
    reset, carried = _reference(lstm, reset=True), _reference(lstm, reset=False)
    # the bug this guards against: carried over from the previous sample, the figures are others
    assert abs(reset["acc_float"] - carried["acc_float"]) >= 0.3
    for threads in (2, 1):  # double-buffered (two interpreter sets) and one set
        got = _figures(_compare(lstm, threads=threads))
        assert got["lstm"] == pytest.approx(reset["lstm"], abs=0.5)
        assert got["output"] == pytest.approx(reset["output"], abs=0.5)
        assert got["acc_float"] == pytest.approx(reset["acc_float"]) and got["acc_int8"] == pytest.approx(reset["acc_int8"])


def test_stateful_runs_one_stream_like_one_interpreter(lstm):
    carried = _reference(lstm, reset=False)
    got = _figures(_compare(lstm, carry=True))
    assert got["lstm"] == pytest.approx(carried["lstm"], abs=0.5)
    assert got["output"] == pytest.approx(carried["output"], abs=0.5)
    assert got["acc_float"] == pytest.approx(carried["acc_float"]) and got["acc_int8"] == pytest.approx(carried["acc_int8"])


def test_resource_variables_are_reset_by_their_init_subgraph(lstm):
    """v <- v / 2 + x, output 2 v, v = 0 initially: input 1 gives 2 from a reset state, then 3, 3.5 carried."""
    model = load_model(lstm["counter"])
    x, out = model.main.inputs[0], model.main.outputs[0]
    for runtime in ("optimized", "reference"):
        runner = ModelRunner(model, runtime)
        assert runner.state is not None and runner.state.init_subgraphs
        ones = {x: np.ones((1, 4), np.float32)}
        assert [float(runner.run(ones)[out][0, 0]) for _ in range(3)] == [2.0, 2.0, 2.0]
        runner.carry_state = True
        runner.reset_state()
        assert [float(runner.run(ones)[out][0, 0]) for _ in range(3)] == [2.0, 3.0, 3.5]


def test_cli_says_the_model_is_stateful(lstm, tmp_path, capsys):
    out = tmp_path / "c.json"
    args = ["compare", str(lstm["float"]), str(lstm["int8"]), "--inputs", str(lstm["inputs"]), "--samples", "4"]
    assert main([*args, "--json", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["stateful"] is True and "reset before every sample" in d["state"]
    assert "stateful model (2 variable tensors (UNIDIRECTIONAL_SEQUENCE_LSTM)): state reset before every sample" in capsys.readouterr().out
    assert main([*args, "--stateful", "--json", str(out)]) == 0
    assert "carried from sample to sample" in json.loads(out.read_text())["state"]
    html = tmp_path / "r.html"
    assert main(["report", *args[1:-2], "--html", str(html)]) == 0
    assert "Stateful model (2 variable tensors (UNIDIRECTIONAL_SEQUENCE_LSTM)): state reset before every sample." in html.read_text()
    capsys.readouterr()
    assert main(["compare", *map(str, _plain_pair()), "--samples", "2", "--json", str(out)]) == 0
    assert json.loads(out.read_text())["stateful"] is False


def _plain_pair():
    from inspector.paths import example_pair

    return example_pair()

