"""`tflite-inspector requantize FLOAT QUANT --out NEW.tflite [edits]`: the surgical CLI contract."""

from __future__ import annotations

import json

import pytest

from inspector.cli import main
from inspector.core.progress import NO_TASK
from tests.helpers.surgical_helpers import assert_untouched, edited_names


def test_keep_float_plan_roundtrip_reproduces_bytes(fixture_path, tmp_path, capsys):
    f, q = fixture_path("float"), fixture_path("int8")
    a, b, plan = tmp_path / "a.tflite", tmp_path / "b.tflite", tmp_path / "plan.json"
    argv = ["requantize", str(f), str(q), "--out", str(a), "--keep-float", "logits", "--bias-correct", "op:5",
            "--samples", "3", "--seed", "4", "--save-plan", str(plan)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "edited op(s) 5, 12 of QUANT" in out
    saved = json.loads(plan.read_text())
    assert saved["route"] == "surgical" and saved["samples"]["count"] == 3 and saved["samples"]["seed"] == 4
    assert [(e["kind"], e["ops"]) for e in saved["edits"]] == [("keep_float", [12]), ("bias_correct", [5])]
    assert main(["requantize", str(f), str(q), "--out", str(b), "--plan", str(plan)]) == 0
    assert a.read_bytes() == b.read_bytes()
    outs, consts = edited_names(q.read_bytes(), [5, 12])
    assert_untouched(q.read_bytes(), a.read_bytes(), outs, consts)


def test_json_summary(fixture_path, tmp_path, capsys):
    f, q = fixture_path("float"), fixture_path("int8_per_tensor")
    out = tmp_path / "n.tflite"
    argv = ["requantize", str(f), str(q), "--out", str(out), "--per-channel", "op:3", "--weight-rounding", "mse", "op:5", "--json", "-"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["edited_ops"] == [3, 5] and d["size_bytes"] == out.stat().st_size
    assert {e["kind"] for e in d["plan"]["edits"]} == {"per_channel", "weight_mse"}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--keep-float", "op:0"], "op:0 is a QUANTIZE op"),
        (["--keep-float", "nothing-like-this"], "matches no op output tensor name"),
        (["--recalibrate", "op:13"], "fixed output parameters (SOFTMAX)"),
        (["--recalibrate", "op:5", "--calibration", "percentile:20"], "--calibration must be"),
        (["--int8", "op:5"], "belongs to the quantizer route"),
        (["--per-tensor", "--keep-float", "op:5"], "belong to the quantizer route"),
        (["--keep-float", "op:5", "--per-channel", "op:5"], "choose one"),
        (["--bias-correct", "op:6"], "has no bias to correct"),
        ([], "give at least one edit"),
    ],
)
def test_bad_requests_exit_2_with_one_line(fixture_path, tmp_path, capsys, extra, message):
    out = tmp_path / "x.tflite"
    assert main(["requantize", str(fixture_path("float")), str(fixture_path("int8")), "--out", str(out), *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err
    assert not out.exists()


def test_refuses_out_equal_to_an_input(fixture_path, capsys):
    f, q = fixture_path("float"), fixture_path("int8")
    before = q.read_bytes()
    assert main(["requantize", str(f), str(q), "--out", str(q), "--keep-float", "op:12"]) == 2
    assert "overwrite an input" in capsys.readouterr().err
    assert q.read_bytes() == before


def test_float_only_edits_need_quant(fixture_path, tmp_path, capsys):
    assert main(["requantize", str(fixture_path("float")), "--out", str(tmp_path / "x.tflite"), "--per-channel", "op:1"]) == 2
    assert "give FLOAT QUANT" in capsys.readouterr().err


def test_runtime_refusal_is_one_clear_line(fixture_path, tmp_path, capsys, monkeypatch):
    """An edit the runtime refuses: exit 2 naming the op (forced here by breaking the edit)."""
    from inspector.core.requantize import weight_requant

    monkeypatch.setattr(weight_requant, "quant_t", lambda s, z, d: _asym(s, d))
    # The worker is a separate process: run in-process for the monkeypatch to apply.
    monkeypatch.setattr("inspector.core.runtime.worker.run_isolated", lambda fn, *a, **k: fn(*a, task=NO_TASK))
    out = tmp_path / "x.tflite"
    assert main(["requantize", str(fixture_path("float")), str(fixture_path("int8_per_tensor")), "--out", str(out), "--per-channel", "op:3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "the edited model does not run" in err and "op " in err and "\n" not in err


def _asym(scales, dim):
    import numpy as np
    from ai_edge_litert import schema_py_generated as schema

    q = schema.QuantizationParametersT()
    q.scale = [float(s) for s in np.atleast_1d(scales)]
    q.zeroPoint = [5] * len(q.scale)  # non-zero weight zero-points: the kernels refuse these
    q.quantizedDimension = dim
    return q


def test_a_runtime_crash_is_a_clean_exit_2(fixture_path, tmp_path, capsys, monkeypatch):
    """The edit and its validation run in the worker process: a LiteRT crash there names the
    step and the models instead of killing the command."""
    import inspector.core.requantize.jobs as jobs
    from tests.helpers import isolation_helpers as h

    monkeypatch.setattr(jobs, "surgical_job", h.segfault_any)
    f, q = fixture_path("float"), fixture_path("int8")
    out = tmp_path / "x.tflite"
    assert main(["requantize", str(f), str(q), "--out", str(out), "--keep-float", "op:12"]) == 2
    err = capsys.readouterr().err
    assert "crashed (signal SIGSEGV" in err and q.name in err and "step 'editing the quantized model" in err
    assert "Traceback" not in err and not out.exists()


def test_keep_float_in_another_signature_leaves_the_other_subgraph_untouched(tmp_path, capsys):
    """`--signature prefill` (subgraph 1): `op:2` is prefill's FULLY_CONNECTED. Edited there only:
    every tensor and buffer of decode's subgraph is byte-identical (read with the LiteRT schema's
    object API, not ours), prefill's other tensors too; both signatures run; prefill's output
    SQNR is not lower; the saved plan names the signature; an unknown key names the keys."""
    from ai_edge_litert import schema_py_generated as schema

    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.samples.settings import SampleSettings
    from inspector.core.tflite.model import Model
    from tests.helpers.paths import REPO
    from tests.helpers.shape_fixtures import cache_path

    f, q = cache_path(REPO / ".fixture-cache", "sig_float"), cache_path(REPO / ".fixture-cache", "sig_int8")
    qm = Model(q)
    prefill, decode = qm.for_signature("prefill").main, qm.for_signature("decode").main
    assert prefill.index != 0 and prefill.ops[2].type == "FULLY_CONNECTED"
    out, plan = tmp_path / "x.tflite", tmp_path / "plan.json"
    args = ["requantize", str(f), str(q), "--out", str(out), "--keep-float", "op:2", "--signature", "prefill"]
    assert main([*args, "--save-plan", str(plan)]) == 0, capsys.readouterr().err
    assert json.loads(plan.read_text())["signature"] == "prefill"

    def tensors(path, sg):
        m = schema.ModelT.InitFromPackedBuf(path.read_bytes(), 0)
        g = m.subgraphs[sg]
        data = lambda t: None if m.buffers[t.buffer].data is None else bytes(bytearray(m.buffers[t.buffer].data))  # noqa: E731
        q = lambda t: (None if t.quantization is None or t.quantization.scale is None  # noqa: E731
                       else (list(t.quantization.scale), list(t.quantization.zeroPoint)))
        return {t.name.decode(): (t.type, list(t.shape), q(t), data(t)) for t in g.tensors}, len(g.operators)

    before, after = tensors(q, decode.index), tensors(out, decode.index)
    assert before == after  # decode: same tensors, parameters, bytes and op count
    (pb, nb), (pa, na) = tensors(q, prefill.index), tensors(out, prefill.index)
    own = {prefill.tensors[i].name for i in prefill.ops[2].inputs[1:] if i >= 0 and prefill.tensors[i].is_constant}
    assert {n for n in pb if n not in pa} == own  # only the op's own int8 weights/bias went (A's float ones replace them)
    assert {n: pa[n] for n in pb if n in pa} == {n: v for n, v in pb.items() if n not in own}  # the rest: identical,
    # the op's int8 output too (a QUANTIZE after the float op writes it)
    added = {n: v for n, v in pa.items() if n not in pb}
    assert added and all(v[0] == schema.TensorType.FLOAT32 for v in added.values())  # the float op's tensors
    assert na == nb + 2  # DEQUANTIZE before, QUANTIZE after the float op

    opts = CompareOptions(samples=SampleSettings(count=4, seed=1), signature="prefill")
    sqnr = [compare_models(str(f), str(p), opts).outputs[0].metrics.sqnr_db for p in (q, out)]
    assert sqnr[1] >= sqnr[0] - 0.05
    dec = compare_models(str(f), str(out), CompareOptions(samples=SampleSettings(count=2, seed=1), signature="decode"))
    again = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=2, seed=1), signature="decode"))
    assert dec.outputs[0].metrics.sqnr_db == again.outputs[0].metrics.sqnr_db

    out2 = tmp_path / "y.tflite"
    assert main(["requantize", str(f), str(q), "--out", str(out2), "--plan", str(plan)]) == 0  # the plan carries its signature
    assert out2.read_bytes() == out.read_bytes()
    assert main(["requantize", str(f), str(q), "--out", str(out2), "--plan", str(plan), "--signature", "decode"]) == 2
    assert "the plan edits signature 'prefill', not 'decode'" in capsys.readouterr().err
    assert main([*args[:-1], "nope"]) == 2
    assert "prefill" in capsys.readouterr().err
