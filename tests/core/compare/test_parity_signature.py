"""Runtime parity follows the chosen signature (issue 26 §11): `compare-runtimes --signature KEY`
runs that signature's subgraph (its ops, its outputs by name), the GUI's parity options carry the
state's signature and the state drops a parity of another signature; the diagnosis uses parity
only of the compared subgraph (its op indices name other ops in another subgraph).

Fixture: the two-signature model (`decode` = subgraph 0, `prefill` = subgraph 1). Independent
reference: the signature table and each subgraph's operator codes read with the `tflite` package.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.compare.diagnosis import with_parity
from inspector.core.compare.parity_result import Difference, ParityOptions, RuntimeParityResult
from inspector.core.compare.runtime_parity import compare_runtimes
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import AppState
from inspector.core.tflite.model import load_model
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path

CACHE = REPO / ".fixture-cache"
NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


def _independent(path, key):
    """(subgraph index, op types in order, output names) of signature `key`."""
    m = tflite.Model.GetRootAsModel(path.read_bytes(), 0)
    for i in range(m.SignatureDefsLength()):
        s = m.SignatureDefs(i)
        if s.SignatureKey().decode() == key:
            sg = m.Subgraphs(s.SubgraphIndex())
            types = [NAMES[max(m.OperatorCodes(sg.Operators(j).OpcodeIndex()).BuiltinCode(),
                               m.OperatorCodes(sg.Operators(j).OpcodeIndex()).DeprecatedBuiltinCode())]
                     for j in range(sg.OperatorsLength())]  # fmt: skip
            outs = sorted(s.Outputs(j).Name().decode() for j in range(s.OutputsLength()))
            return s.SubgraphIndex(), types, outs
    raise AssertionError(key)


def test_compare_runtimes_runs_the_chosen_signature(tmp_path):
    q = cache_path(CACHE, "sig_int8")
    sub, types, outs = _independent(q, "prefill")
    assert sub == 1  # what the fixture is: prefill is not subgraph 0
    out = tmp_path / "p.json"
    r = subprocess.run([sys.executable, "-m", "inspector", "compare-runtimes", str(q), "--signature", "prefill",
                        "--samples", "2", "--json", str(out)], capture_output=True, text=True)  # fmt: skip
    assert r.returncode == 0, r.stderr
    p = json.loads(out.read_text())
    assert p["signature"] == "prefill" and p["subgraph"] == 1
    assert [lay["op_type"] for lay in p["layers"]] == [types[lay["op_index"]] for lay in p["layers"]]
    assert {lay["op_type"] for lay in p["layers"]} <= set(types) and len(p["layers"]) >= len(types) - 2
    assert sorted(o["name"] for o in p["outputs"]) == outs
    bad = subprocess.run([sys.executable, "-m", "inspector", "compare-runtimes", str(q), "--signature", "nope", "--samples", "1"],
                         capture_output=True, text=True)  # fmt: skip
    assert bad.returncode == 2 and "nope" in bad.stderr and len(bad.stderr.strip().splitlines()) == 1


def _planted(parity: RuntimeParityResult, op: int) -> RuntimeParityResult:
    """`parity` with op `op`'s runtime departing from the spec by 9 LSB on half its values."""
    layers = tuple(dataclasses.replace(lay, spec_mismatch={"optimized": Difference(0.5, 9.0)}) if lay.op_index == op else lay
                   for lay in parity.layers)  # fmt: skip
    if not any(lay.op_index == op for lay in parity.layers):
        layers = (*layers, dataclasses.replace(parity.layers[0], op_index=op, spec_mismatch={"optimized": Difference(0.5, 9.0)}))
    return dataclasses.replace(parity, layers=layers)


def test_the_diagnosis_uses_parity_of_the_compared_subgraph_only():
    f, q = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    samples = SampleSettings(count=2, seed=0)
    res = compare_models(str(f), str(q), CompareOptions(samples=samples, signature="prefill"))
    fm, qm = load_model(f).for_signature("prefill"), load_model(q).for_signature("prefill")
    op = res.layers[0].op_index
    other = _planted(compare_runtimes(str(q), ParityOptions(samples=samples)), op)  # subgraph 0 (decode)
    same = _planted(compare_runtimes(str(q), ParityOptions(samples=samples, signature="prefill")), op)
    assert other.signature is None and same.signature == "prefill" and same.subgraph == 1
    cause = lambda r: next(lay for lay in r.layers if lay.op_index == op).diagnosis.cause  # noqa: E731
    assert cause(with_parity(res, fm, qm, same)) == "kernel"
    assert cause(with_parity(res, fm, qm, other)) != "kernel"


def test_the_state_drops_parity_of_another_signature_and_gui_options_carry_it():
    f, q = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    s = AppState()
    s.set_model("A", load_model(f))
    s.set_model("B", load_model(q))
    s.set_signature("prefill")
    p = RuntimeParityResult(model=str(q), runtimes=("reference", "optimized"), threads=(1, 1), samples=1, layers=(),
                            outputs=(), signature="prefill", subgraph=1)  # fmt: skip
    s.set_parity(p)
    assert s.parity is p
    s.set_signature("decode")
    assert s.parity is None
    back = RuntimeParityResult.from_json(json.loads(json.dumps(p.to_json())))
    assert back.signature == "prefill" and back.subgraph == 1
