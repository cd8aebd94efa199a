"""Opening a `.litertlm` bundle in the GUI (issue 15): the sections dialog lists tokenizer and
TFLite sections with their sizes (as an independent parse with litert-lm-builder's schema sees
them), a TFLite section opens in A or B as `bundle.litertlm#N`, the pair compares like the plain
files, sessions store the address; drag and drop and the command line lead to the same dialog."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import QMimeData, QSettings, QUrl

from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.session import load_session
from inspector.gui.views.file_drop import tflite_paths
from inspector.gui.views.sections_dialog import size_text
from tests.helpers.bundle_fixtures import build_bundle
from tests.helpers.gui_helpers import WAIT_MS, click_enabled
from tests.helpers.paths import REPO
from tests.helpers.shape_fixtures import cache_path

CACHE = REPO / ".fixture-cache"


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    pytest.importorskip("litert_lm_builder")
    f, q = cache_path(CACHE, "sig_float"), cache_path(CACHE, "sig_int8")
    return build_bundle(tmp_path_factory.mktemp("bundle"), f, q), f, q


def _independent_sections(path):
    """(data type, begin, end) per section, through litert-lm-builder's generated schema."""
    from litert_lm_builder import litertlm_header_schema_py_generated as schema

    data = path.read_bytes()
    end = int.from_bytes(data[24:32], "little")
    meta = schema.LiteRTLMMetaData.GetRootAs(bytearray(data[32:end]), 0)
    sm = meta.SectionMetadata()
    return [(sm.Objects(i).DataType(), sm.Objects(i).BeginOffset(), sm.Objects(i).EndOffset()) for i in range(sm.ObjectsLength())]


def _open_section(qtbot, win, slot: str, row: int, button_slot: str | None = None) -> None:
    dlg = win.sections_dialog
    assert dlg is not None and dlg.isVisible()
    dlg.select_section(row)
    button = dlg.open_a if (button_slot or slot) == "A" else dlg.open_b
    with qtbot.waitSignal(win.controller.slot_changed, timeout=WAIT_MS, check_params_cb=lambda s: s == slot):
        click_enabled(qtbot, button)


def test_sections_dialog_lists_and_opens_sections(qtbot, window, bundle, tmp_path):
    path, f, q = bundle
    assert window.open_model("A", path) is None  # a whole bundle: its sections are listed first
    dlg = window.sections_dialog
    rows = [[dlg.table.item(r, c).text() for c in range(4)] for r in range(dlg.table.rowCount())]
    indep = _independent_sections(path)
    assert len(rows) == len(indep) == 3
    kinds = {3: "TFLite model", 4: "SentencePiece tokenizer"}
    assert [r[1] for r in rows] == [kinds[t] for t, _, _ in indep]
    assert [r[2] for r in rows] == [size_text(hi - lo) for _, lo, hi in indep]
    assert rows[1][2] == size_text(f.stat().st_size) and rows[2][2] == size_text(q.stat().st_size)
    assert "model_type=tf_lite_prefill_decode" in rows[1][3]
    assert dlg.selected_section().index == 1  # the first TFLite section
    dlg.select_section(0)  # the tokenizer cannot be opened as a model
    assert not dlg.open_a.isEnabled() and not dlg.open_b.isEnabled()
    assert "not a TFLite model" in dlg.note.text()

    _open_section(qtbot, window, "A", 1)
    assert window.controller.models["A"].path == f"{path}#1"
    assert "model.litertlm#1" in window.panes["A"].info.text()
    window.open_files([str(path)])  # only A is open: the next file goes to B
    _open_section(qtbot, window, "B", 2)
    assert window.controller.models["B"].path == f"{path}#2"
    assert "model.litertlm#1 ↔ model.litertlm#2" in window.windowTitle()

    # The sections compare like the files they hold.
    panel = window.features.compare_features.inputs
    panel.count.setValue(3)
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=60_000) as blocker:
        click_enabled(qtbot, panel.run_button)
    result = blocker.args[0]
    indep_r = compare_models(str(f), str(q), CompareOptions(samples=SampleSettings(count=3, seed=panel.seed.value())))
    assert [lay.tensor_name for lay in result.layers] == [lay.tensor_name for lay in indep_r.layers]
    np.testing.assert_allclose([lay.metrics.mse for lay in result.layers], [lay.metrics.mse for lay in indep_r.layers], rtol=1e-9)

    # A session stores the addresses (size and hash of the bundle) and reopens them.
    s = tmp_path / "bundle.tqi.json"
    window.features.session.save(s)
    saved = load_session(s)["models"]
    assert saved["float"]["path"] == f"{path.resolve()}#1" and saved["quant"]["path"] == f"{path.resolve()}#2"
    assert saved["float"]["size"] == path.stat().st_size
    window.controller.close_model("A")
    window.controller.close_model("B")
    with qtbot.waitSignal(window.features.session.restored, timeout=WAIT_MS):
        window.features.session.open(s)
    assert window.controller.models["A"].path == f"{path.resolve()}#1"
    assert window.controller.models["B"].path == f"{path.resolve()}#2"
    assert not window.banner.isVisible()


def test_drop_and_command_line_show_the_sections(qtbot, window, bundle, tmp_path):
    path, _, _ = bundle
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    assert tflite_paths(mime) == [str(path)]
    window.panes["B"].files_dropped_here(tflite_paths(mime))  # dropped on pane B
    dlg = window.sections_dialog
    assert dlg is not None and dlg.slot == "B" and dlg.open_b.isDefault()
    _open_section(qtbot, window, "B", 2)
    assert window.controller.models["B"].path == f"{path}#2"

    from inspector.gui.app import create_window

    settings = QSettings(str(tmp_path / "cli.ini"), QSettings.Format.IniFormat)
    win = create_window(str(path), f"{path}#2", settings=settings)  # `tflite-inspector gui X.litertlm X.litertlm#2`
    qtbot.addWidget(win)
    win.show()
    assert win.sections_dialog is not None and win.sections_dialog.slot == "A"
    qtbot.waitUntil(lambda: win.controller.models["B"] is not None, timeout=WAIT_MS)
    assert win.controller.models["B"].path == f"{path}#2"


def test_broken_bundle_names_the_file(qtbot, window, tmp_path):
    bad = tmp_path / "broken.litertlm"
    bad.write_bytes(b"LITERTLM" + b"\x00" * 16 + (10**9).to_bytes(8, "little"))
    assert window.open_model("A", bad) is None
    assert window.sections_dialog is None
    assert window.banner.isVisible() and "broken.litertlm" in window.banner.label.text()
