"""One layer identity with its subgraph (issue 18 §1): on a `for_signature` view, op math, the
audit, the report (worst layers, op math) and the Model Explorer overlay address the chosen
signature's subgraph, never subgraph 0's ops under the same indices.

The two-signature fixture has decode as subgraph 0 and prefill as subgraph 1, so an index read
in the wrong subgraph names another op (prefill op 1 is a FULLY_CONNECTED, decode op 1 a
QUANTIZE). References: the op types and tensor indices of the signature's subgraph parsed
independently with the `tflite` flatbuffer package, and SQNRs recomputed from LiteRT's own
signature runner with every intermediate tensor kept.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.export import text_table, worst_layers
from inspector.core.quantmath.opmath import op_math
from inspector.core.review.audit import audit_model
from inspector.core.review.model_explorer import node_data
from inspector.core.review.report import build_report
from inspector.core.review.report_html import render_html
from inspector.core.samples.settings import SampleSettings
from inspector.core.tflite.model import load_model
from tests.helpers.reference import preserving_interpreter, sqnr_db
from tests.helpers.shape_fixtures import cache_path

REPO = Path(__file__).resolve().parents[3]
CACHE = REPO / ".fixture-cache"
KEY = "prefill"
_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


def independent_subgraph(path, key: str) -> tuple[int, str, list[tuple[str, list[int], list[int]]]]:
    """(subgraph index, subgraph name, [(op type, inputs, outputs)]) of signature `key`, parsed
    with the `tflite` package alone."""
    fb = tflite.Model.GetRootAs(Path(path).read_bytes(), 0)
    sig = next(fb.SignatureDefs(i) for i in range(fb.SignatureDefsLength()) if fb.SignatureDefs(i).SignatureKey().decode() == key)
    si = sig.SubgraphIndex()
    sg = fb.Subgraphs(si)
    ops = []
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = fb.OperatorCodes(op.OpcodeIndex())
        code = max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())
        ops.append((_NAMES[code], list(op.InputsAsNumpy()), list(op.OutputsAsNumpy())))
    return si, (sg.Name() or b"").decode(), ops


@pytest.fixture(scope="module")
def prefill(tmp_path_factory):
    """(float path, quant path, comparison of 'prefill' on known samples, LiteRT tensors per side)."""
    fpath, qpath = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    rng = np.random.default_rng(18)
    emb = rng.uniform(-1, 1, (3, 1, 8, 16)).astype(np.float32)
    npz = tmp_path_factory.mktemp("sig") / "prefill.npz"
    np.savez(npz, embeddings=emb.reshape(3, 8, 16))  # samples along axis 0, keyed by the input name
    opts = CompareOptions(signature=KEY, samples=SampleSettings(count=None, source=str(npz)), runtime="reference")
    result = compare_models(str(fpath), str(qpath), opts)
    assert result.signature == KEY and result.samples == 3
    return fpath, qpath, result, emb


def _litert_values(path, key: str, emb: np.ndarray) -> dict[int, np.ndarray]:
    """Every tensor of the signature's subgraph over all samples, dequantized (float64)."""
    it = preserving_interpreter(path)
    runner = it.get_signature_runner(key)
    si = runner._subgraph_index
    acc: dict[int, list[np.ndarray]] = {}
    for x in emb:
        runner(embeddings=x)
        for d in it.get_tensor_details(si):
            try:
                v = np.array(it.get_tensor(d["index"], si)).astype(np.float64)
            except ValueError:
                continue
            qp = d["quantization_parameters"]
            if len(qp["scales"]) == 1 and np.issubdtype(d["dtype"], np.integer):
                v = (v - qp["zero_points"][0]) * float(qp["scales"][0])
            acc.setdefault(d["index"], []).append(v.ravel())
    return {k: np.concatenate(v) for k, v in acc.items()}


def test_op_math_reads_the_signatures_subgraph(prefill):
    _, qpath, result, emb = prefill
    si, _, ops = independent_subgraph(qpath, KEY)
    assert si == 1
    view = load_model(qpath).for_signature(KEY)
    for i, (op_type, ins, outs) in enumerate(ops):
        om = op_math(view, i)
        assert (om.subgraph, om.op_index, om.op_type) == (si, i, op_type)
        assert {t.index for t in om.tensors} == {t for t in ins + outs if t >= 0}
    # The comparison's SQNR sits on the prefill op's output tensor, as LiteRT measures it there.
    fvals, qvals = _litert_values(prefill[0], KEY, emb), _litert_values(qpath, KEY, emb)
    checked = 0
    for lay in result.layers:
        om = op_math(view, lay.op_index, comparison=result)
        out = next(t for t in om.tensors if t.index == lay.quant_tensor)
        ref = sqnr_db(fvals[lay.float_tensor], qvals[lay.quant_tensor])
        assert out.observed["sqnr_db"] == pytest.approx(ref, abs=1e-3), (lay.op_index, lay.op_type)
        checked += 1
    assert checked >= 4


def test_op_math_of_another_subgraph_gets_no_observed_values(prefill):
    """Decode's ops asked for explicitly with prefill's comparison: indices are not pinned across."""
    _, qpath, result, _ = prefill
    view = load_model(qpath).for_signature(KEY)
    _, _, decode_ops = independent_subgraph(qpath, "decode")
    for i in range(len(decode_ops)):
        om = op_math(view, i, subgraph=0, comparison=result)
        assert om.subgraph == 0 and om.op_type == decode_ops[i][0]
        assert all(t.observed is None for t in om.tensors)


def test_report_explains_the_signatures_worst_layers(prefill):
    fpath, qpath, result, _ = prefill
    si, _, ops = independent_subgraph(qpath, KEY)
    rep = build_report(str(fpath), str(qpath), result, worst_n=5)
    worst = worst_layers(result, 5)
    assert set(rep["op_math"]) == {str(w.op_index) for w in worst}
    for key, om in rep["op_math"].items():  # was decode's op under prefill's index
        op_type, ins, outs = ops[int(key)]
        assert (om["subgraph"], om["op_type"]) == (si, op_type)
        assert {t["index"] for t in om["tensors"]} == {t for t in ins + outs if t >= 0}
    assert rep["signature"] == KEY and rep["subgraph"] == si
    assert [w["op_index"] for w in rep["worst_layers"]] == [w.op_index for w in worst]
    assert {w["subgraph"] for w in rep["worst_layers"]} == {si}
    html = render_html(rep)
    assert f"(signature '{KEY}', subgraph {si})" in html


def test_audit_findings_carry_the_compared_subgraph(prefill):
    """Range findings of a prefill comparison name prefill's ops and subgraph 1."""
    _, qpath, result, _ = prefill
    si, _, ops = independent_subgraph(qpath, KEY)
    low = dataclasses.replace(result, layers=tuple(
        dataclasses.replace(lay, metrics=dataclasses.replace(lay.metrics, range_use=0.01, clip_rate=0.2)) for lay in result.layers))
    view = load_model(qpath).for_signature(KEY)
    ranged = [f for f in audit_model(view, low) if f.rule in ("low-range-use", "clipping")]
    assert len(ranged) == 2 * len(result.layers)
    for f in ranged:
        assert f.subgraph == si and f.op_type == ops[f.op_index][0]
        assert f.tensor_index in ops[f.op_index][2]
    io = [f for f in audit_model(view, result) if f.op_index is None]
    assert io and all(f.subgraph == si for f in io)  # the view's inputs/outputs
    # The whole file audited: a prefill comparison adds nothing to decode's ops.
    whole = [f for f in audit_model(load_model(qpath), low) if f.rule in ("low-range-use", "clipping")]
    assert len(whole) == len(ranged) and all(f.subgraph == si for f in whole)


def test_model_explorer_overlay_uses_the_signatures_graph(prefill):
    _, qpath, result, _ = prefill
    si, name, _ = independent_subgraph(qpath, KEY)
    for model in (load_model(qpath), load_model(qpath).for_signature(KEY)):
        nd = node_data(result, model=model)
        assert list(nd) == [name or f"subgraph_{si}"] == ["prefill"]
        assert set(nd["prefill"]["results"]) == {str(lay.op_index) for lay in result.layers}


def test_cli_report_on_a_signature(prefill, tmp_path):
    """The measured defect: `report FLOAT QUANT --signature prefill --json` explained decode's ops."""
    fpath, qpath, _, _ = prefill
    si, _, ops = independent_subgraph(qpath, KEY)
    rep, me = tmp_path / "r.json", tmp_path / "me.json"
    p = subprocess.run([sys.executable, "-m", "inspector", "report", str(fpath), str(qpath), "--signature", KEY,
                        "--samples", "2", "--json", str(rep), "--model-explorer", str(me)],
                       capture_output=True, text=True, cwd=REPO)  # fmt: skip
    assert p.returncode == 0, p.stderr
    data = json.loads(rep.read_text())
    assert data["op_math"]
    for key, om in data["op_math"].items():
        assert (om["subgraph"], om["op_type"]) == (si, ops[int(key)][0])
        layer = next(lay for lay in data["comparison"]["layers"] if lay["op_index"] == int(key))
        out = next(t for t in om["tensors"] if t["index"] == layer["quant_tensor"])
        assert out["observed"]["sqnr_db"] == pytest.approx(layer["metrics"]["sqnr_db"])
    assert list(json.loads(me.read_text())) == ["prefill"]


def test_text_table_and_worst_layers_name_the_signatures_ops(prefill):
    _, qpath, result, _ = prefill
    _, _, ops = independent_subgraph(qpath, KEY)
    lines = text_table(result).splitlines()
    assert f"signature: {KEY} (op numbers are its subgraph's)" in lines
    for w in worst_layers(result, 5):
        assert w.op_type == ops[w.op_index][0] and w.quant_tensor in ops[w.op_index][2]


def test_runtime_check_names_ops_of_the_signatures_subgraph():
    """A refusal while running signature 'prefill' counts nodes in prefill's subgraph: the
    message named decode's tensor 'add' (op 8 of subgraph 0) for a delegate node of prefill."""
    from inspector.core.requantize.check import run_check
    from inspector.core.tflite import edit as fe

    qpath = cache_path(CACHE, "sig_int8")
    si, _, ops = independent_subgraph(qpath, KEY)
    m = fe.read(qpath.read_bytes())
    fc = next(i for i, (t, _, _) in enumerate(ops) if t == "FULLY_CONNECTED")
    w = m.subgraphs[si].tensors[ops[fc][1][1]]
    w.quantization.zeroPoint = [3] * len(w.quantization.zeroPoint)  # XNNPACK refuses non-zero weight zero points
    p = run_check(fe.write(m), {"embeddings": np.zeros((1, 8, 16), np.float32)}, KEY)
    assert p is not None and p.subgraph == si and p.op_index is not None
    assert f"refused op {p.op_index} (" in p.message and f") of subgraph {si}" in p.message
    prefill_sg, decode_sg = load_model(qpath).for_signature(KEY).main, load_model(qpath).subgraphs[0]
    if p.op_index < len(decode_sg.ops):  # decode's op under that number is not named
        assert f"output '{decode_sg.tensors[decode_sg.ops[p.op_index].outputs[0]].name}'" not in p.message
    if p.op_index < len(prefill_sg.ops):  # prefill's is
        assert f"output '{prefill_sg.tensors[prefill_sg.ops[p.op_index].outputs[0]].name}'" in p.message
