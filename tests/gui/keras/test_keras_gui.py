"""Issue 20 in the GUI: a QAT .h5 opens as A (its float twin made in the worker, the window
responsive meanwhile), its QAT ranges show beside model B's scales (checked against the .tflite
parsed with the `tflite` package), and the Keras comparison fills the layer table; drops of
Keras files and SavedModel folders are accepted; Make TFLite twins opens the pair."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import tflite
from PySide6.QtCore import QMimeData, QUrl

from inspector.gui.views.file_drop import tflite_paths

WAIT = 180_000


def _scales(path) -> dict[str, float]:
    sg = tflite.Model.GetRootAsModel(bytearray(Path(path).read_bytes()), 0).Subgraphs(0)
    out = {}
    for i in range(sg.TensorsLength()):
        q = sg.Tensors(i).Quantization()
        if q is not None and q.ScaleLength():
            out[sg.Tensors(i).Name().decode()] = float(q.ScaleAsNumpy()[0])
    return out


def _open_keras(qtbot, window, path, tmp_path):
    window.features.keras.cache_root = str(tmp_path / "twins")
    w = window.open_model("A", path)
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    assert w.error is None, w.error
    qtbot.waitUntil(lambda: window.controller.models["A"] is not None and window.features.keras.source is not None, timeout=WAIT)


def test_qat_h5_opens_as_a_with_ranges_beside_b_and_layer_errors(qtbot, window, keras_models, tmp_path):
    _open_keras(qtbot, window, keras_models / "mlp_qat.h5", tmp_path)
    a = window.controller.models["A"]
    assert Path(a.path).name == "mlp_qat_float.tflite"  # the structure comes from the float twin
    assert window.features.keras.view.qat_table.rowCount() >= 4
    b_path = keras_models / "mlp_qat_int8.tflite"
    window.open_model("B", b_path)
    qtbot.waitUntil(lambda: window.controller.models["B"] is not None, timeout=WAIT)
    qtbot.waitUntil(lambda: window.features.keras.source["info"]["tflite"] == str(b_path), timeout=WAIT)
    scales = _scales(b_path)
    for q in window.features.keras.source["info"]["qat"]:
        t = q["tflite"]["activation"]
        assert t["scale"] == np.float32(scales[t["name"]]) or abs(t["scale"] - scales[t["name"]]) < 1e-12
    assert window.features.keras.view.compare_button.isEnabled()
    w = window.features.keras.compare()
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    assert w.error is None, w.error
    qtbot.waitUntil(lambda: window.features.keras.comparison is not None, timeout=WAIT)  # queued after is_done
    d = window.features.keras.comparison
    assert [x["keras_layer"] for x in d["layers"]] == ["quantize_layer", "quant_dense_1", "quant_dense_2", "quant_probs"]
    assert window.features.keras.view.layer_table.rowCount() == len(d["layers"])
    assert window.features.keras.view.layer_table.item(3, 2).text() == "quant_probs"
    # A QAT row selects its tensor in B (the tensor table and op math follow); a layer row its op.
    row = next(i for i in range(window.features.keras.view.qat_table.rowCount())
               if window.features.keras.view.qat_table.item(i, 0).text() == "quant_dense_1")  # fmt: skip
    window.features.keras.view.qat_table.cellClicked.emit(row, 0)
    want = window.features.keras.source["info"]["qat"][1]["tflite"]["activation"]["tensor"]
    assert window.controller.selection.tensor("B") == want
    window.features.keras.view.layer_table.cellClicked.emit(2, 0)
    assert window.controller.selection.op("B") == d["layers"][2]["op_index"]
    if os.environ.get("KERAS_SHOTS"):
        window.features.keras.show_tab()
        for size in ((1280, 800), (1920, 1080)):
            window.resize(*size)
            qtbot.wait(200)
            window.grab().save(f"/tmp/h20-keras-{size[0]}.png")


def test_drops_accept_keras_files_and_savedmodel_folders(keras_models):
    mime = QMimeData()
    urls = [keras_models / "mlp_qat.h5", keras_models / "cnn_float.keras", keras_models / "mlp_qat_sm", keras_models / "mlp_inputs.npz"]
    mime.setUrls([QUrl.fromLocalFile(str(p)) for p in urls])
    got = [Path(p).name for p in tflite_paths(mime)]
    assert got == ["mlp_qat.h5", "cnn_float.keras", "mlp_qat_sm"]


def test_make_twins_opens_the_pair(qtbot, window, keras_models, tmp_path):
    w = window.features.keras.make_twins(str(keras_models / "mlp_qat_sm"), str(tmp_path / "out"))
    qtbot.waitUntil(lambda: w.is_done, timeout=WAIT)
    assert w.error is None, w.error
    models = window.controller.models  # A and B load side by side: either may finish first
    qtbot.waitUntil(lambda: models["A"] is not None and models["B"] is not None, timeout=WAIT)
    assert Path(window.controller.models["A"].path).name == "mlp_qat_sm_float.tflite"
    assert Path(window.controller.models["B"].path).name == "mlp_qat_sm_int8.tflite"
    # The float twin knows its Keras model (twins.json beside it): the Keras tab links to it,
    # as it does when a session or a recent file reopens the twin.
    qtbot.waitUntil(lambda: window.features.keras.source is not None and window.features.keras.source["info"]["tflite"] is not None, timeout=WAIT)
    assert window.features.keras.source["path"] == str((keras_models / "mlp_qat_sm").resolve())
    assert window.features.keras.view.compare_button.isEnabled()


def test_opening_a_keras_model_never_blocks_the_window(qtbot, window, keras_models, tmp_path):
    """TF's import and the conversion run in the worker process: the event loop's 10 ms watchdog
    keeps ticking, no gap holding more than every watchdog's bound of GUI-thread work."""
    import time

    from tests.helpers.event_loop_watchdog import BOUND_MS, EventLoopWatchdog

    t0 = time.perf_counter()
    with EventLoopWatchdog() as dog:
        _open_keras(qtbot, window, keras_models / "cnn_qat_sm", tmp_path)
    elapsed = time.perf_counter() - t0
    print(f"opened a QAT SavedModel as A in {elapsed:.2f} s; {dog.report()}")
    assert elapsed > 0.5 and dog.ticks >= 0.1 * elapsed / 0.01
    assert dog.longest_cpu_ms < BOUND_MS, dog.report()
