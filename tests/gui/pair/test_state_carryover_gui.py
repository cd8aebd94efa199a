"""State that must not carry over from one pair or version to the next (issue 19 §1): the old
pair's baseline, its inputs, a failure banner, the reference of another version, a pair check
blind to inputs and outputs, versions restored without their comparisons, and an edit that
changes nothing. Every figure is checked against the state it must describe (the files open,
an independent `compare_models` run, the `tflite` package's reading of the inputs)."""

from __future__ import annotations

import dataclasses
import shutil

import numpy as np
import pytest
import tflite

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.requantize.delta import output_sqnr_db
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.versions import Version
from inspector.gui.main_window import MainWindow
from tests.helpers.gui_helpers import (
    WAIT_MS,
    click_enabled,
    open_pair_checked,
    open_wait,
    use_random_samples,
)
from tests.helpers.paths import REPO

RUN_MS = 120_000
CACHE = REPO / ".fixture-cache"


def _run(qtbot, win, count: int = 2):
    panel = win.features.compare_features.inputs
    if panel.source.currentData() == "random":
        panel.count.setValue(count)
    with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    return blocker.args[0]


def _random_opts(count: int = 2) -> CompareOptions:
    return CompareOptions(samples=SampleSettings(count=count, seed=0))


def test_opening_another_pair_drops_the_old_baseline_and_delta(qtbot, window, example_pair, fixture_path):
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    use_random_samples(window)
    before = _run(qtbot, window)
    window.features.compare.set_baseline(before, "before: v0")  # as a requantize run leaves it
    plots = (window.features.compare_features.plot, window.features.requantize_panel.plot)
    assert all(p.baseline is before for p in plots)

    other = str(fixture_path("int8"))  # another model B, same inputs
    open_wait(qtbot, window, "B", other)
    assert window.features.compare.baseline is None and window.features.compare.result is None
    assert all(p.baseline is None and p.result is None for p in plots)  # nothing of the old pair drawn
    rq = window.features.requantize
    assert [v.path for v in rq.versions] == [other] and rq.current == 0 and rq.reference is None
    assert rq.delta is None


def test_a_pair_without_remembered_inputs_starts_from_its_default(qtbot, window, offset_pair, tmp_path):
    from tests.helpers.task_fixtures import TaskFixtures

    models = TaskFixtures(CACHE).models()
    fa, fb = str(models["cls_float"]), str(models["cls_int8"])
    open_pair_checked(qtbot, window, fa, fb)
    npz = tmp_path / "images.npz"
    np.savez(npz, image=np.random.default_rng(0).random((3, 32, 32, 3), np.float32))
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(npz))
    panel.path.editingFinished.emit()
    assert window.state.samples.source == str(npz)

    open_pair_checked(qtbot, window, *offset_pair)  # a (1, 64) input: the 32x32 images cannot feed it
    s = window.state.samples
    assert s == SampleSettings() and panel.source.currentData() == "random"
    assert panel.status.text() == f"No samples chosen for this pair yet: starting from its default, {s.describe()}."
    result = _run(qtbot, window)
    assert result.samples_are_random and result.samples == 2
    want = compare_models(*offset_pair, _random_opts())
    assert [L.metrics.sqnr_db for L in result.layers] == pytest.approx([L.metrics.sqnr_db for L in want.layers])

    open_pair_checked(qtbot, window, fa, fb)  # the first pair again: its own file is back
    assert window.state.samples.source == str(npz) and panel.path.text() == str(npz)


def test_a_later_success_hides_the_comparison_failed_banner(qtbot, window, offset_pair, tmp_path):
    open_pair_checked(qtbot, window, *offset_pair)
    bad = tmp_path / "images.npz"
    np.savez(bad, image=np.zeros((2, 32, 32, 3), np.float32))  # not the model's (1, 64) input
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("file"))
    panel.path.setText(str(bad))
    panel.path.editingFinished.emit()
    with qtbot.waitSignal(window.features.compare.failed, timeout=RUN_MS):
        click_enabled(qtbot, panel.run_button)
    assert window.banner.isVisible() and window.banner.text.startswith("Comparison failed")

    panel.source.setCurrentIndex(panel.source.findData("random"))
    result = _run(qtbot, window)
    assert result is not None and not window.banner.isVisible()
    assert panel.status.text().startswith("Done:")


def test_making_v0_model_b_again_measures_it_against_nothing(qtbot, window, example_pair, tmp_path):
    """v1..v4 each made from the previous one, v4 measured against v3; then v0 chosen in the
    versions table: no "v3 → v0" delta, no "before: v3" series, a status about v0, no plan rows
    of another model B. Back to v4: measured against v3, the version it was made from."""
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    use_random_samples(window)
    r0 = _run(qtbot, window)
    rq, panel = window.features.requantize, window.features.requantize_panel
    assert rq.versions[0].comparison is r0
    prev = fb
    for k in range(1, 5):  # copies of B stand for edited versions (same bytes, their own files)
        path = str(tmp_path / f"v{k}.tflite")
        shutil.copyfile(fb, path)
        rq.versions.append(Version(k, f"v{k} edit", path, fa, "edited", source=prev,
                                   comparison=dataclasses.replace(r0, quant_path=path)))  # fmt: skip
        prev = path
    with qtbot.waitSignal(window.controller.pair_changed, timeout=WAIT_MS):
        rq.compare_versions(3, 4)
    assert (rq.current, rq.reference) == (4, 3) and window.features.compare.baseline_label == "before: v3 edit"
    assert rq.delta is not None and (rq.delta.before_name, rq.delta.after_name) == ("v3 edit", "v4 edit")
    ed = panel.editor
    ed.add_layers([1])
    assert ed.table.rowCount() == 1

    with qtbot.waitSignal(window.controller.pair_changed, timeout=WAIT_MS):
        panel.versions.switch_requested.emit(0)  # as the versions table does
    assert window.controller.models["B"].path == fb
    assert (rq.current, rq.reference) == (0, None)
    assert rq.delta is None and window.features.compare.baseline is None
    assert window.features.compare_features.plot.baseline is None and panel.plot.baseline is None
    assert window.features.compare.result is r0  # v0's own comparison, no run
    assert ed.status.text().startswith("v0 original int8 is model B now")
    assert ed.table.rowCount() == 0  # rows named ops of v4's numbering

    with qtbot.waitSignal(window.controller.pair_changed, timeout=WAIT_MS):
        panel.versions.switch_requested.emit(4)
    assert (rq.current, rq.reference) == (4, 3) and window.features.compare.baseline_label == "before: v3 edit"
    assert (rq.delta.before_name, rq.delta.after_name) == ("v3 edit", "v4 edit")


def _io(path: str) -> list[tuple[str, tuple[int, ...]]]:
    """Inputs and outputs of subgraph 0 read with the `tflite` package (independent of Model)."""
    m = tflite.Model.GetRootAsModel(open(path, "rb").read(), 0)
    sg = m.Subgraphs(0)
    return [(what, tuple(sg.Tensors(i).ShapeAsNumpy().tolist()))
            for what, idx in (("input", sg.InputsAsNumpy()), ("output", sg.OutputsAsNumpy())) for i in idx]  # fmt: skip


def test_a_pair_with_other_inputs_is_warned_about_on_open(qtbot, window, cnn_pair, offset_pair):
    fa = str(cnn_pair[0])  # the CNN the offset fixture varies
    open_pair_checked(qtbot, window, fa, offset_pair[1])
    (_, shape_a), (_, shape_b) = _io(fa)[0], _io(offset_pair[1])[0]
    assert shape_a[1:] != shape_b[1:]  # the models really read different inputs
    banner = window.features.pair.pair_banner
    assert banner.isVisible() and banner.text.startswith("Not a float model and its quantized twin:")
    dims = lambda s: [-1, *s[1:]]  # noqa: E731 - the batch dimension is free
    assert f"input 0 is {dims(shape_a)} float32 in A but {dims(shape_b)} float32 in B" in banner.text
    assert window.features.pair.checker.check.io_mismatches and not window.features.pair.checker.check.related

    open_pair_checked(qtbot, window, *offset_pair)  # its own twin: no warning
    assert not banner.isVisible() and window.features.pair.checker.check.io_mismatches == ()


def test_a_session_brings_back_the_comparisons_of_its_versions(qtbot, window, settings, example_pair, tmp_path):
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    use_random_samples(window)
    _run(qtbot, window)
    rq = window.features.requantize
    v1 = str(tmp_path / "v1.tflite")
    shutil.copyfile(fb, v1)
    rq.versions.append(Version(1, "v1 edit", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=RUN_MS):  # v1 is compared when shown
        rq.compare_versions(0, 1)
    qtbot.waitUntil(lambda: rq.versions[1].comparison is not None and not window.features.compare.running, timeout=RUN_MS)
    want = [output_sqnr_db(v.comparison) for v in rq.versions]
    assert None not in want

    path = tmp_path / "s.tqi.json"
    window.features.session.save(path)
    other = MainWindow(settings=settings)
    qtbot.addWidget(other)
    with qtbot.waitSignal(other.features.session.restored, timeout=RUN_MS):
        other.features.session.open(path)
    orq = other.features.requantize
    assert [v.path for v in orq.versions] == [fb, v1] and orq.current == 1 and orq.reference == 0
    assert [output_sqnr_db(v.comparison) for v in orq.versions] == pytest.approx(want)
    assert not other.features.compare.running  # nothing re-run: the figures came back with the session
    assert orq.delta is not None and orq.delta.output_delta_db == pytest.approx(want[1] - want[0])
    rows = [orq.output_sqnr(i) for i in range(2)]
    assert rows == pytest.approx(want)  # the versions table's "output SQNR" column, not "not compared yet"
    independent = compare_models(fa, v1, window.features.requantize.comparison_options())
    assert output_sqnr_db(independent) == pytest.approx(want[1])


def test_an_edit_that_changes_nothing_makes_no_version(qtbot, window, example_pair):
    fa, fb = (str(p) for p in example_pair)
    open_pair_checked(qtbot, window, fa, fb)
    use_random_samples(window)
    _run(qtbot, window)
    c, rq, ed = window.controller, window.features.requantize, window.features.requantize_panel.editor
    conv = next(op for op in c.models["B"].main.ops if op.type == "CONV_2D")
    weights = c.models["B"].main.tensors[conv.inputs[1]]
    assert weights.quantization.per_channel  # already per-channel
    ed.ops_edit.setText(str(conv.index))
    ed._add_typed()
    ed.set_row_choice(0, "per_channel")
    with qtbot.waitSignal(rq.unchanged, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, ed.run_button)
    qtbot.waitUntil(lambda: not rq.running, timeout=RUN_MS)
    assert len(rq.versions) == 1 and rq.current == 0 and c.models["B"].path == fb
    assert blocker.args[0].startswith("No new version: the edit changes nothing in v0 original int8")
    assert "already had per-channel weights" in blocker.args[0]
    assert ed.status.text() == blocker.args[0]
    assert list(rq.folder.glob("*.tflite")) == []  # the identical file is not left behind
