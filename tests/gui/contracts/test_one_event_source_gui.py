"""One event source (issue 22): a controller announces a change of models, selection, options,
baseline or versions only while `AppState` emits the event that made it (relayed), never by
hand after calling the state; and an inputs-panel edit changes its own field of the options only."""

from __future__ import annotations

import shutil

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.app_state import Event
from inspector.core.state.versions import Version
from tests.helpers.gui_helpers import WAIT_MS, click_enabled, open_wait

RUN_MS = 120_000


def test_controllers_relay_only_what_app_state_emitted(qtbot, window, example_pair, tmp_path, monkeypatch):
    depth = [0]
    emit = Event.emit

    def counted(self, *args):
        depth[0] += 1
        try:
            emit(self, *args)
        finally:
            depth[0] -= 1

    monkeypatch.setattr(Event, "emit", counted)
    c, cc, rq = window.controller, window.features.compare, window.features.requantize
    signals = {
        "model_changed": c.slot_changed, "models_changed": c.pair_changed, "selection_changed": c.selection_changed,
        "signature_changed": c.signature_changed, "options_changed": cc.options_changed,
        "baseline_changed": cc.baseline_changed, "versions_changed": rq.versions_changed,
    }  # fmt: skip
    seen: dict[str, int] = dict.fromkeys(signals, 0)
    stray: list[str] = []

    def spy(name):
        def on(*_args):
            seen[name] += 1
            if depth[0] == 0:
                stray.append(name)

        return on

    for name, sig in signals.items():
        sig.connect(spy(name))

    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fb)  # the wrong way round: the pair check swaps them
    open_wait(qtbot, window, "B", fa)
    qtbot.waitUntil(lambda: c.models["A"] is not None and c.models["A"].path == fa and window.features.pair.checker.check is not None,
                    timeout=WAIT_MS)  # fmt: skip
    panel = window.features.compare_features.inputs
    panel.source.setCurrentIndex(panel.source.findData("random"))
    panel.count.setValue(2)
    with qtbot.waitSignal(cc.result_changed, timeout=RUN_MS) as blocker:
        click_enabled(qtbot, panel.run_button)
    r0 = blocker.args[0]
    c.select_op("B", r0.layers[1].op_index)
    c.set_channel(1)
    c.clear_selection()
    c.set_signature("serving_default" if "serving_default" in window.state.signature_keys() else None)
    v1 = str(tmp_path / "v1.tflite")
    shutil.copyfile(fb, v1)
    rq.versions.append(Version(1, "v1 copy", v1, fa, "edited", source=fb))
    with qtbot.waitSignal(cc.result_changed, timeout=RUN_MS):
        rq.compare_versions(0, 1)
    qtbot.waitUntil(lambda: not cc.running, timeout=RUN_MS)
    with qtbot.waitSignal(c.pair_changed, timeout=WAIT_MS):
        rq.switch_to(0)
    cc.clear_baseline()
    c.close_model("B")

    assert stray == [], f"announced without an AppState event: {stray}"
    assert all(n > 0 for n in seen.values()), seen  # every kind of change happened


def test_an_inputs_panel_edit_changes_its_own_field_only(qtbot, window, example_pair):
    fa, fb = (str(p) for p in example_pair)
    open_wait(qtbot, window, "A", fa)
    open_wait(qtbot, window, "B", fb)
    state, panel = window.state, window.features.compare_features.inputs
    opts = CompareOptions(samples=SampleSettings(count=3, seed=1), runtime="reference", isolated=True,
                          keep_values=frozenset({2, 5}), threads=1, task_kind="other")  # fmt: skip
    window.features.compare.set_options(opts)
    panel.seed.setValue(7)
    assert state.options == CompareOptions(samples=SampleSettings(count=3, seed=7), runtime="reference", isolated=True,
                                           keep_values=frozenset({2, 5}), threads=1, task_kind="other")  # fmt: skip
    panel.runtime.setCurrentIndex(panel.runtime.findData("optimized"))
    assert state.options.runtime == "optimized" and state.options.threads == 1 and state.options.task_kind == "other"
    panel.isolated.setChecked(False)
    assert state.options.keep_values == frozenset({2, 5}) and state.options.samples.seed == 7
    panel.count.setValue(0)
    assert state.options.samples.count is None and state.options.threads == 1  # all samples
    assert state.options != panel.options()  # never rebuilt from the widgets (they show no threads)


def test_features_find_menus_by_name_not_by_text(window):
    import subprocess

    from tests.helpers.paths import REPO

    ui, bar = window.ui, window.menuBar()
    assert [a.text() for a in bar.actions()] == ["&File", "&View", "&Compare", "Re&quantize", "&Help"]  # Help last
    assert ui.menu("Compare").menuAction() is bar.actions()[2] and ui.menu("File").menuAction() is bar.actions()[0]
    assert window.features.pair.act_example in ui.menu("File").actions()
    hits = subprocess.run(["grep", "-rn", 'text().replace("&"', "inspector/gui"], cwd=REPO, capture_output=True, text=True).stdout
    assert hits == ""
