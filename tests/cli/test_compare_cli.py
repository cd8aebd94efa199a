"""`tflite-inspector compare`: JSON schema, CSV columns, table, exit codes."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from inspector.cli import main
from inspector.core.compare.export import QD_COLUMNS
from inspector.core.stats.metrics import METRIC_KEYS
from tests.helpers.fixture_models import representative_images

LAYER_KEYS = {"op_index", "op_type", "tensor_name", "float_tensor", "quant_tensor", "match", "metrics", "isolated"}


@pytest.fixture(scope="module")
def pair(fixture_path):
    return str(fixture_path("float")), str(fixture_path("int8"))


def test_json_to_stdout_follows_the_contract(pair, capfd):
    rc = main(["compare", *pair, "--samples", "2", "--isolated", "--json", "-"])
    out, err = capfd.readouterr()
    assert rc == 0
    d = json.loads(out)  # nothing but JSON on stdout
    assert {"float", "quant", "runtime", "samples", "layers", "unmatched", "outputs"} <= set(d)
    assert d["runtime"] == "optimized" and d["samples"] == 2 and d["float"] == pair[0]
    assert d["layers"] and d["outputs"]
    qm_order = [layer["op_index"] for layer in d["layers"]]
    assert qm_order == sorted(qm_order)  # execution order of the quantized model
    for layer in d["layers"]:
        assert LAYER_KEYS <= set(layer)
        assert set(METRIC_KEYS) <= set(layer["metrics"])
        assert layer["isolated"] is None or set(METRIC_KEYS) <= set(layer["isolated"])
    conv = next(layer for layer in d["layers"] if layer["op_type"] == "CONV_2D")
    assert 20 < conv["metrics"]["sqnr_db"] < 70 and conv["isolated"]["sqnr_db"] > 20
    assert len(conv["metrics"]["per_channel_sqnr_db"]) == 16
    assert {"name", "metrics"} <= set(d["outputs"][0])


def test_csv_and_json_files_and_table(pair, tmp_path, capfd):
    j, c = tmp_path / "out" / "r.json", tmp_path / "r.csv"
    j.parent.mkdir()  # an output's folder must exist (issue 34: no longer created silently)
    rc = main(["compare", *pair, "--samples", "2", "--runtime", "reference", "--json", str(j), "--csv", str(c)])
    out, _ = capfd.readouterr()
    assert rc == 0
    assert "SQNR dB" in out and "CONV_2D" in out and "output" in out
    d = json.loads(j.read_text())
    assert d["runtime"] == "reference"
    rows = list(csv.DictReader(c.open()))
    assert len(rows) == len(d["layers"])
    assert set(QD_COLUMNS) <= set(rows[0])
    assert {f"acc_{k}" for k in METRIC_KEYS} <= set(rows[0])
    assert any(layer["isolated"] is not None for layer in d["layers"])  # the own error: on by default
    for row, layer in zip(rows, d["layers"], strict=True):
        assert int(row["op_index"]) == layer["op_index"]
        source = "accumulated" if layer["isolated"] is None else "isolated"  # QuantizationDebugger's figure where there is one
        want = layer["metrics" if source == "accumulated" else "isolated"]["mse"]
        assert float(row["mean_squared_error"]) == pytest.approx(want, rel=1e-12, abs=0)
        assert row["qd_source"] == source


def test_fail_below_sqnr_gate(pair, capfd):
    assert main(["compare", *pair, "--samples", "2", "--fail-below-sqnr", "10"]) == 0
    capfd.readouterr()
    assert main(["compare", *pair, "--samples", "2", "--fail-below-sqnr", "90"]) == 1
    _, err = capfd.readouterr()
    assert "output" in err and "below 90 dB" in err and "worst layers" in err


def test_wrong_input_shape_exits_2_naming_the_input(pair, tmp_path, capfd):
    p = tmp_path / "wrong.npz"
    np.savez(p, image=representative_images(2, seed=1, shape=(28, 28, 3)))
    rc = main(["compare", *pair, "--inputs", str(p)])
    out, err = capfd.readouterr()
    assert rc == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "'image'" in lines[0] and "wrong.npz" in lines[0] and "[2, 28, 28, 3]" in lines[0]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    "args, words",
    [
        (["--samples", "0"], ["--samples"]),
        (["--inputs", "/no/such/file.npz"], ["/no/such/file.npz"]),
    ],
)
def test_bad_arguments_exit_2(pair, capfd, args, words):
    assert main(["compare", *pair, *args]) == 2
    _, err = capfd.readouterr()
    assert all(w in err for w in words)


def test_not_a_model_exits_2(pair, tmp_path, capfd):
    bad = tmp_path / "bad.tflite"
    bad.write_bytes(b"not a flatbuffer at all")
    assert main(["compare", pair[0], str(bad)]) == 2
    _, err = capfd.readouterr()
    assert "bad.tflite" in err and len(err.strip().splitlines()) == 1


def test_csv_cells_are_plain_numbers_for_numpy_scalars():
    import numpy as np

    from inspector.core.compare.export import _cell

    got = [_cell(v) for v in (np.float64(1.5), np.float32(0.25), np.int64(3), 2.0, float("-inf"), None)]
    assert got == ["1.5", "0.25", "3", "2.0", "-inf", ""]
