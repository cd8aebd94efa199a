"""The graph of the model (`core.graph`, CLI `graph --svg`, the report's embedded graph).

Independent references: op and edge counts from a parse of the flatbuffer with the `tflite`
package; the planted layer's SQNR in its tooltip against numpy on LiteRT's own tensors
(`experimental_preserve_all_tensors`); the layout checked geometrically (every tensor flows
downward, no two boxes overlap).
"""

from __future__ import annotations

import math
import re
import time
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import tflite

from inspector.cli import main
from inspector.core.compare.diagnosis import THRESHOLDS
from inspector.core.compare.result import LayerResult
from inspector.core.graph.layout import layout_graph
from inspector.core.graph.scales import CAUSE_FILLS, NO_DATA, SCALES, worst_channel_sqnr
from inspector.core.graph.structure import model_graph
from inspector.core.tflite.model import load_model
from inspector.paths import example_pair
from tests.helpers import diagnosis_fixtures as dx
from tests.helpers.paths import REPO
from tests.helpers.reference import preserving_interpreter, sqnr_db
from tests.helpers.task_fixtures import TaskFixtures

SVG = "{http://www.w3.org/2000/svg}"


def _flatbuffer_graph(path) -> tuple[list[str], set[tuple[int, int]]]:
    """(op type names, producer->reader op pairs) of subgraph 0, read with the `tflite` package."""
    m = tflite.Model.GetRootAsModel(bytearray(open(path, "rb").read()), 0)
    names = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}
    sg = m.Subgraphs(0)
    types, producer, pairs = [], {}, set()
    for i in range(sg.OperatorsLength()):
        op = sg.Operators(i)
        oc = m.OperatorCodes(op.OpcodeIndex())
        types.append(names[max(oc.BuiltinCode(), oc.DeprecatedBuiltinCode())])
        for t in op.InputsAsNumpy() if op.InputsLength() else ():
            if t in producer:
                pairs.add((producer[t], i))
        for t in op.OutputsAsNumpy():
            producer[int(t)] = i
    return types, pairs


def _ops(svg_text: str) -> dict[int, ET.Element]:
    root = ET.fromstring(svg_text)
    els = [e for e in root.iter() if "data-op" in e.attrib]
    out = {int(e.get("data-op")): e for e in els}
    assert len(out) == len(els), "an op drawn twice"
    return out


def _title(e: ET.Element) -> str:
    return e.find(f"{SVG}title").text


def test_one_svg_element_per_op_with_its_fill_title_and_edges(tmp_path):
    _, q = example_pair()
    out = tmp_path / "g.svg"
    assert main(["graph", str(q), "--svg", str(out)]) == 0
    text = out.read_text()
    types, pairs = _flatbuffer_graph(q)
    ops = _ops(text)
    assert sorted(ops) == list(range(len(types)))
    for i, e in ops.items():
        assert re.fullmatch(r"#[0-9a-f]{6}", e.get("fill")) and e.get("fill") == NO_DATA  # structure only: grey
        assert _title(e).startswith(f"op {i} {types[i]}")
    edges = [e for e in ET.fromstring(text).iter(f"{SVG}path") if e.get("class") == "edge"]
    graph = model_graph(load_model(q))
    op_node = {n.id: n.op_index for n in graph.nodes}
    drawn = {(op_node[e.src], op_node[e.dst]) for e in graph.edges if op_node[e.src] is not None and op_node[e.dst] is not None}
    assert drawn == pairs  # op-to-op edges as the flatbuffer has them
    assert len(edges) == len(graph.edges) == len(pairs) + 2  # + the graph input and output
    assert all("scale" in _title(e) or "not quantized" in _title(e) for e in edges)


@pytest.fixture(scope="module")
def clipped(tmp_path_factory):
    """diag_int8 with conv2's output scale narrowed 4x (planted clipping), and labelled inputs."""
    paths = dx.models(REPO / ".fixture-cache")
    q = paths["diag_int8"]
    op = dx.op_index(q, "conv2")
    planted = tmp_path_factory.mktemp("graph") / "clipped.tflite"
    planted.write_bytes(dx.scale_output(q.read_bytes(), op, 0.25))
    return paths["diag_float"], planted, op, dx.op_index(q, "conv1"), TaskFixtures(REPO / ".fixture-cache").npz(40)


def _graph_of(args, tmp_path, name) -> dict[int, ET.Element]:
    out = tmp_path / name
    assert main(["graph", *args, "--svg", str(out)]) == 0
    return _ops(out.read_text())


def _rgb(fill: str) -> tuple[int, int, int]:
    return tuple(int(fill[k : k + 2], 16) for k in (1, 3, 5))  # type: ignore[return-value]


def test_a_planted_bad_layer_and_a_healthy_one_get_different_fills(clipped, tmp_path):
    f, q, bad, good, inputs = clipped
    args = [str(f), str(q), "--inputs", str(inputs), "--runtime", "reference", "--isolated"]
    by_sqnr = _graph_of([*args, "--metric", "sqnr"], tmp_path, "sqnr.svg")
    r, _, b = _rgb(by_sqnr[bad].get("fill"))
    assert r > b + 60  # the red end of the scale
    r, _, b = _rgb(by_sqnr[good].get("fill"))
    assert b > r  # the blue (healthy) end
    # the value in the tooltip is the layer's SQNR, against numpy on LiteRT's own tensors
    fi, qi = preserving_interpreter(f), preserving_interpreter(q)
    fo = load_model(f).main.ops[dx.op_index(f, "conv2")].outputs[0]
    qo = load_model(q).main.ops[bad].outputs[0]
    xs, ys = [], []
    for x in np.load(inputs)["image"][:40]:
        for it in (fi, qi):
            it.set_tensor(it.get_input_details()[0]["index"], x[None].astype(np.float32))
            it.invoke()
        s, z = qi.get_tensor_details()[qo]["quantization"]
        xs.append(fi.get_tensor(fo).astype(np.float64))
        ys.append((qi.get_tensor(qo).astype(np.float64) - z) * s)
    expected = sqnr_db(np.stack(xs), np.stack(ys))
    shown = float(re.search(r"accumulated SQNR \(dB\): (-?[\d.]+) dB", _title(by_sqnr[bad])).group(1))
    assert abs(shown - expected) < 0.06, (shown, expected)
    assert expected < THRESHOLDS.good_db
    by_cause = _graph_of([*args, "--metric", "cause"], tmp_path, "cause.svg")
    assert by_cause[bad].get("fill") == CAUSE_FILLS["clipping"] and "cause: clipping" in _title(by_cause[bad])
    assert by_cause[good].get("fill") != by_cause[bad].get("fill")


def test_scales_are_centred_on_the_diagnosis_thresholds():
    sq, clip, use = SCALES["sqnr"], SCALES["clip"], SCALES["range_use"]
    assert sq.position(THRESHOLDS.good_db) == 0 and sq.position(5.0) == -1 and sq.position(math.inf) == 1
    assert clip.position(THRESHOLDS.clip_rate) == 0 and clip.position(0.5) == -1 and clip.position(0.0) == 1
    assert clip.position(0.01) < 0 < clip.position(1e-4)
    assert use.position(THRESHOLDS.range_use) == 0 and use.position(0.01) == -1 and use.position(0.9) == 1
    assert sq.position(None) is None


def test_worst_channel_reads_the_channels_summary_when_present_else_per_channel_sqnr():
    from inspector.core.stats.metrics import compute_metrics

    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    y = x + np.array([0.001, 0.01, 0.1, 0.0001], np.float32)
    m = compute_metrics(x, y, channel_axis=-1)
    layer = LayerResult(0, "ADD", "t", 0, 0, "name", m)
    per = [sqnr_db(x[:, c], y[:, c]) for c in range(4)]
    assert worst_channel_sqnr(layer) == pytest.approx(min(per), abs=1e-3)
    object.__setattr__(layer, "channels", {"axis": 3, "count": 4, "worst": {"index": 2, "sqnr_db": 7.5, "range_use": 0.3}})
    assert worst_channel_sqnr(layer) == 7.5


def test_layout_of_a_converter_built_model_with_several_hundred_ops():
    from tests.helpers.graph_fixtures import deep_transformer

    path = deep_transformer(REPO / ".fixture-cache", 8, "float")
    types, pairs = _flatbuffer_graph(path)
    assert len(types) >= 300
    graph = model_graph(load_model(path))
    t0 = time.perf_counter()
    lay = layout_graph(graph)
    assert time.perf_counter() - t0 < 5.0
    node = graph.node_of_op()
    for a, b in pairs:  # every tensor flows down the page
        assert lay.centres[node[a]][1] < lay.centres[node[b]][1]
    rows = {round(y) for _x, y in lay.centres}
    assert len(rows) >= 100  # layered: deep, not one wide row
    by_row: dict[float, list[tuple[float, float]]] = {}
    for i in range(len(graph.nodes)):
        x, y, w, _h = lay.box(i)
        by_row.setdefault(round(y + lay.sizes[i][1] / 2), []).append((x, w))
    for boxes in by_row.values():  # no two boxes of a layer overlap (boxes of different layers are a row apart)
        boxes.sort()
        assert all(x1 + w1 < x2 for (x1, w1), (x2, _) in zip(boxes, boxes[1:], strict=False))


def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys):
    f, q = example_pair()
    assert main(["graph", str(q), "--svg", str(tmp_path / "a.svg"), "--signature", "nope"]) == 2
    assert main(["graph", str(q), "--svg", str(tmp_path / "b.svg"), "--samples", "3"]) == 2
    assert main(["graph", str(tmp_path / "missing.tflite"), "--svg", str(tmp_path / "c.svg")]) == 2
    with pytest.raises(SystemExit) as e:
        main(["graph", str(q), "--svg", str(tmp_path / "d.svg"), "--metric", "loudness"])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and "nope" in err[0] and "missing.tflite" in err[2]
    assert not any((tmp_path / n).exists() for n in ("a.svg", "b.svg", "c.svg", "d.svg"))


def test_the_report_embeds_the_graph_and_each_op_links_to_its_section(clipped, tmp_path):
    from inspector.core.compare.comparison import CompareOptions, compare_models
    from inspector.core.review.report import build_report, write_report
    from inspector.core.samples.settings import SampleSettings

    f, q, bad, good, inputs = clipped
    opts = CompareOptions(samples=SampleSettings(count=40, seed=1, source=str(inputs)), isolated=True)
    res = compare_models(str(f), str(q), opts)
    report = build_report(str(f), str(q), res, worst_n=2)
    html = tmp_path / "r.html"
    write_report(report, res, html=str(html))
    text = html.read_text()
    section = re.search(r'<section id="graph">(.*?)</section>', text, re.S)
    assert section and '<a href="#graph">' in text
    svg = re.search(r"<svg .*?</svg>", section.group(1), re.S).group(0)
    types, _ = _flatbuffer_graph(q)
    ops = _ops(svg)
    assert sorted(ops) == list(range(len(types)))
    links = dict(re.findall(r'<a href="#([\w-]+)"><g class="op" data-op="(\d+)"', svg))
    assert f"opmath-{bad}" in links and links[f"opmath-{bad}"] == str(bad)  # the planted layer is among the worst
    for anchor in links:
        assert f'id="{anchor}"' in text  # every link lands on a section of the report
    assert _rgb(ops[bad].get("fill"))[0] > _rgb(ops[good].get("fill"))[0]


def test_the_layout_library_is_a_declared_dependency_and_bundled():
    import tomllib

    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert any(re.match(r"igraph\b", d) for d in deps), deps
    assert 'collect_submodules("igraph"' in (REPO / "packaging" / "tflite_inspector.spec").read_text()


def test_badges_fixed_output_float_edited_and_audit():
    from inspector.core.graph.style import op_badges

    _, q = example_pair()
    types, _ = _flatbuffer_graph(q)
    b = op_badges(load_model(q), edited=[1], audit_ops=[2])
    softmax = types.index("SOFTMAX")
    assert "fixed" in b[softmax]  # int8 SOFTMAX: output fixed at 1/256, -128
    assert b[1] == ("edited",) and b[2] == ("audit",)
    assert not any("float" in v for v in b.values())  # a full-integer model: only QUANTIZE/DEQUANTIZE touch float
    f, _ = example_pair()
    assert op_badges(load_model(f)) == {}  # a float model: no op is "float inside a quantized model"


def test_cli_draws_another_subgraph_of_one_model(tmp_path):
    from tests.helpers.shape_fixtures import cache_path

    path = cache_path(REPO / ".fixture-cache", "sig_int8")
    m = tflite.Model.GetRootAsModel(bytearray(path.read_bytes()), 0)
    assert m.SubgraphsLength() >= 2
    for sub in range(m.SubgraphsLength()):
        out = tmp_path / f"s{sub}.svg"
        assert main(["graph", str(path), "--subgraph", str(sub), "--svg", str(out)]) == 0
        assert sorted(_ops(out.read_text())) == list(range(m.Subgraphs(sub).OperatorsLength()))
    assert main(["graph", str(path), "--subgraph", str(m.SubgraphsLength()), "--svg", str(tmp_path / "x.svg")]) == 2
