"""Keras, SavedModel and QAT models in the GUI (`KerasFeature(controller, ui, opmath)`, composed by the main window).

Model A may be a Keras model: its float twin (made once, in the worker process, cached) gives
the panes, pairing and tables their structure, while the "Keras / QAT" tab shows the QAT ranges
beside B's scales and runs the Keras comparison (every Keras layer against B's tensor) with the
inputs chosen for the pair. File › Make TFLite twins… converts a model and opens the pair.
TensorFlow is imported in the worker process only; the window stays responsive meanwhile.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog

from inspector.core.keras.compare_keras import compare_keras
from inspector.core.keras.convert import make_twins
from inspector.core.keras.for_view import default_cache_root, keras_source_of, open_for_view
from inspector.core.keras.info import keras_info
from inspector.core.keras.qat_tensors import QatColumns, QatTensor, qat_by_tensor, qat_math_section
from inspector.core.keras.qat_variables import variable_table_rows, variables_caption
from inspector.core.keras.result import KerasComparison
from inspector.core.keras.rows import layer_rows, qat_row_tensors, qat_rows
from inspector.core.progress import TaskState
from inspector.core.quantmath.opmath_types import OpMath
from inspector.core.runtime.worker import run_isolated
from inspector.core.state.app_state import same_file
from inspector.gui.keras.keras_view import KerasView
from inspector.gui.protocols import ModelsController, OpMathShown
from inspector.gui.ui_services import UiServices
from inspector.gui.workers import Worker, guarded

KERAS_FILTER = "Keras models (*.keras *.h5 *.hdf5);;All files (*)"


def _in_worker(fn: Callable[..., Any], *args: object, task: TaskState | None, step: str, models: Sequence[str] = ()) -> Any:
    return run_isolated(fn, *args, task=task, step=step, models=models)


class KerasFeature(QObject):
    def __init__(self, controller: ModelsController, ui: UiServices, opmath: OpMathShown) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.opmath = opmath  # B's op math gains a "QAT range → scale" section
        self.controller = controller
        self.source: dict[str, Any] | None = None  # open_for_view's result for model A
        self.comparison: dict[str, Any] | None = None  # KerasComparison.to_json() of the last run
        self.worker: Worker | None = None
        self._restored_comparison: dict[str, Any] | None = None  # a session's Keras-vs-B table, shown once its source is back
        self.qat_tensors: dict[int, QatTensor] = {}  # model B's tensor -> its QAT range (when paired with B)
        self.cache_root = str(default_cache_root())  # where Keras models' float twins are kept
        self.view = KerasView()
        ui.add_tab("Keras / QAT", self.view)  # tabs move later (Requantize stays last): find it by widget
        self.view.compare_requested.connect(self.compare)
        self.view.twins_requested.connect(self.choose_twins)
        self.view.tensor_activated.connect(self._select_b_tensor)
        self.view.op_activated.connect(lambda op: self.controller.select_op("B", op))
        self.controller.pair_changed.connect(self._models_changed)
        self.controller.signature_changed.connect(lambda _k: self._show_beside_b())  # another subgraph: other tensors
        opmath.op_math_updated.connect(self._op_math_shown)
        menu = ui.menu("File")
        first = menu.actions()[2] if len(menu.actions()) > 2 else None
        self.act_folder = menu.addAction("Open Keras &SavedModel folder (A)…", self.choose_folder)
        self.act_twins = menu.addAction("Make TFLite &twins…", self.choose_twins)
        if first is not None:
            menu.insertAction(first, self.act_folder)
            menu.insertAction(first, self.act_twins)

    def show_tab(self) -> None:
        self.ui.show_tab(self.view)

    # ------------------------------------------------------------------ opening
    def open_keras(self, slot: str, path: str | Path) -> Worker:
        """Open a Keras model as A (a Keras model is a float model: slot B opens it as A too)."""
        path = str(Path(path).absolute())
        if slot != "A":
            self.ui.status("A Keras model is the float model: it opens as A", 8000)
        w = Worker(_in_worker, open_for_view, path, self.cache_root, step="opening the Keras model", models=(path,), wants_progress=True)
        w.progress.connect(guarded(self, lambda _f, text: self._opening_step(path, text)))
        w.finished.connect(guarded(self, self._opened))
        w.failed.connect(guarded(self, lambda msg: self._open_failed(msg)))
        self._opening_step(path, "starting")
        self.view.set_source(f"Opening {Path(path).name} (loading TensorFlow and the model, converting its float twin; "
                             "converted twins are kept for the next time)…", False)
        self.controller.run_task(w, f"Opening {Path(path).name}")
        return w

    def _opening_step(self, path: str, text: str) -> None:
        """Pane A says what the conversion is doing (it took 10-30 s to show anything but "No model in A")."""
        if text:
            self.ui.panes["A"].set_waiting(f"Opening the Keras model {Path(path).name}…\n\n{text[:1].upper()}{text[1:]}.")

    def _open_failed(self, msg: str) -> None:
        self.ui.panes["A"].set_waiting(None)
        self.ui.show_error(f"Could not open model A: {msg}", "A")

    def _opened(self, src: dict[str, Any]) -> None:
        self.ui.panes["A"].set_waiting(None)
        self.source = src
        self.comparison = None
        self.view.set_layers([], None, "")
        w = self.controller.open_model("A", src["float_twin"])
        w.done.connect(guarded(self, lambda: self.ui.recent.add("A", src["path"])))
        w.done.connect(guarded(self, self._show_restored_comparison))
        self._show_info(src["info"])

    def _select_b_tensor(self, tensor: int) -> None:
        """A QAT row: its tensor in model B (tensor table, op math) when its ranges are beside B."""
        b = self.controller.models["B"]
        if self.source is not None and b is not None and self.source["info"].get("tflite") == b.path:
            self.controller.select_tensor("B", tensor)

    def _show_info(self, info: dict[str, Any]) -> None:
        self.view.set_qat(qat_rows(info), qat_row_tensors(info))
        self.view.set_variables(variable_table_rows(info), variables_caption(info))
        self._update_header()
        self._show_beside_b()

    def _show_beside_b(self) -> None:
        """B's tensor table and op math show the QAT ranges when they were paired with B."""
        b = self.controller.models["B"]
        info = self.source["info"] if self.source is not None else None
        paired = info is not None and b is not None and info.get("tflite") == b.path and b.main.index == 0  # keras_info pairs with subgraph 0
        self.qat_tensors = qat_by_tensor(info) if paired and info is not None else {}
        self.ui.panes["B"].tensors.set_extra_columns(QatColumns(self.qat_tensors) if self.qat_tensors else None)
        self.opmath.set_section(None)
        self._op_math_shown(self.opmath.current_math())

    def _op_math_shown(self, om: OpMath | None) -> None:
        """Op math of B's op (the panel shows B's whenever B is open): its tensors' QAT ranges."""
        b = self.controller.models["B"]
        if om is None or not self.qat_tensors or b is None or om.subgraph != 0:
            return
        self.opmath.set_section(qat_math_section(self.qat_tensors, [(t.role, t.index) for t in om.tensors]))

    def _update_header(self) -> None:
        src = self.source
        if src is None:
            return
        info = src["info"]
        b = self.controller.models["B"]
        kind = "QAT (quantization-aware) " if info["is_qat"] else ""
        beside = info.get("tflite") or "—"
        refs = (" References: the main plot and op table measure B against the float twin after its fake quant; "
                "the layer table below against the Keras simulation." if info["is_qat"] else "")
        self.view.set_source(f"A: {kind}Keras model {Path(src['path']).name} ({info['keras_format']}); structure from its "
                             f"float twin {Path(src['float_twin']).name}. QAT ranges beside: {Path(beside).name if beside != '—' else beside}."
                             + refs, b is not None)

    def _a_is_keras(self) -> bool:
        a = self.controller.models["A"]
        return self.source is not None and a is not None and Path(a.path) == Path(self.source["float_twin"])

    def _models_changed(self) -> None:
        if self.source is not None and not self._a_is_keras():
            self.source = None
            self.view.set_source("No Keras model open.", False)
            self.view.set_qat([])
        self._show_beside_b()  # B changed: its tensors pair with the QAT ranges again once keras_info says so
        a = self.controller.models["A"]
        if self.source is None and a is not None and (src := keras_source_of(a.path)) is not None:
            self._relink(src, a.path)  # a session, a recent file or Make TFLite twins reopened a float twin
            return
        if self.source is None:
            return
        b = self.controller.models["B"]
        self._update_header()
        if self.source is None or b is None or not self.source["info"]["is_qat"]:
            return
        path = self.source["path"]
        w = Worker(_in_worker, keras_info, path, b.path, step="pairing the QAT ranges with model B", models=(path, b.path), wants_progress=True)
        w.finished.connect(guarded(self, self._info_for_b))
        w.failed.connect(guarded(self, self.controller.error.emit))
        self.controller.run_task(w, "QAT ranges beside model B")

    def _relink(self, src: str, twin: str) -> None:
        b = self.controller.models["B"]
        w = Worker(_in_worker, keras_info, src, b.path if b is not None else None, step="reading the Keras model",
                   models=(src,), wants_progress=True)
        w.finished.connect(guarded(self, lambda info: self._relinked(src, twin, info)))
        w.failed.connect(guarded(self, self.controller.error.emit))
        self.controller.run_task(w, f"Reading {Path(src).name}")

    def _relinked(self, src: str, twin: str, info: dict[str, Any]) -> None:
        a = self.controller.models["A"]
        if a is None or Path(a.path) != Path(twin):
            return  # A changed meanwhile
        self.source = {"path": src, "float_twin": twin, "int8_twin": None, "info": info}
        self._show_info(info)
        self._show_restored_comparison()

    def _info_for_b(self, info: dict[str, Any]) -> None:
        if self.source is not None:
            self.source = {**self.source, "info": info}
            self._show_info(info)

    # ------------------------------------------------------------------ Keras comparison
    def compare(self) -> Worker | None:
        b = self.controller.models["B"]
        if self.source is None or b is None:
            return None
        opts = dataclasses.replace(self.controller.state.options, isolated=True)  # cheap here, and says which layer is fragile
        path = self.source["path"]
        w = Worker(_in_worker, compare_keras, path, b.path, opts, step="comparing the Keras model with B", models=(path, b.path), wants_progress=True)
        w.finished.connect(guarded(self, self._compared))
        w.failed.connect(guarded(self, self.controller.error.emit))
        self.view.compare_button.setEnabled(False)
        w.done.connect(guarded(self, lambda: self.view.compare_button.setEnabled(self.controller.models["B"] is not None)))
        self.worker = self.controller.run_task(w, "Comparing the Keras model with B")
        return w

    def _compared(self, kc: KerasComparison) -> None:
        self._show_comparison(kc.to_json())

    def _show_comparison(self, d: dict[str, Any]) -> None:
        self.comparison = d
        rows, mark = layer_rows(d)
        fd = d["first_departure"]
        out = d["outputs"][0]["metrics"]["sqnr_db"] if d["outputs"] else None
        text = f"{d['samples']} samples ({d['inputs']}); output SQNR {out:.2f} dB. " if out is not None else f"{d['samples']} samples. "
        text = f"Reference: {d['reference']}. " + text if d.get("reference") else text
        if d["float"]["qat"]:
            text += (f"First departure from the QAT simulation (more than one int8 step): op {fd['op_index']} "
                     f"{fd['op_type']}, layer '{fd['keras_layer']}', {fd['steps']:.2f} steps." if fd else
                     "B follows the QAT simulation within one int8 step at every paired layer.")
        ops = [layer["op_index"] for layer in d["layers"]] + [None] * (len(rows) - len(d["layers"]))
        self.view.set_layers(rows, mark, text, ops)

    # ------------------------------------------------------------------ session
    def session_part(self) -> dict[str, Any] | None:
        """What a session keeps of the Keras work: the source of model A (not only its cached
        twin, which a cleared cache or another machine lacks) and the Keras-vs-B table."""
        if self.source is None or not self._a_is_keras():
            return None
        return {"source": self.source["path"], "float_twin": self.source["float_twin"], "comparison": self.comparison}

    def restore_session_part(self, part: dict[str, Any]) -> None:
        """A session's Keras part, once its models are open: model A is the saved twin (relinked
        to its source, as the cache may not know it) or, the twin gone, the source reopened."""
        src, twin = part["source"], part.get("float_twin")
        self._restored_comparison = part.get("comparison")
        a = self.controller.models["A"]
        if a is not None and twin is not None and same_file(a.path, twin):
            if self.source is not None and same_file(self.source["path"], src):
                self._show_restored_comparison()
            else:
                self._relink(src, a.path)
        elif Path(src).exists():
            self.open_keras("A", src)
        else:
            self._restored_comparison = None
            self.ui.show_error(f"The session's Keras model {src} no longer exists: model A is not restored")

    def _show_restored_comparison(self) -> None:
        """The session's Keras-vs-B table, when it describes the open model B."""
        d, self._restored_comparison = self._restored_comparison, None
        b = self.controller.models["B"]
        if d is None or self.source is None:
            return
        if b is None or not isinstance(d.get("quant"), str) or not same_file(d["quant"], b.path):
            self.ui.status("The session's Keras comparison describes another model B: not restored", 8000)
            return
        self._show_comparison(d)

    # ------------------------------------------------------------------ dialogs
    def choose_folder(self) -> None:
        path = QFileDialog.getExistingDirectory(self.ui.parent, "Open a Keras SavedModel folder as A", self.ui.recent.last_dir)
        if path:
            self.ui.open_model("A", path)

    def choose_twins(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self.ui.parent, "Make TFLite twins of a Keras model", self.ui.recent.last_dir, KERAS_FILTER)
        if not path:
            return
        out = QFileDialog.getExistingDirectory(self.ui.parent, "Folder for the TFLite twins", str(Path(path).parent))
        if out:
            self.make_twins(path, out)

    def make_twins(self, path: str, out_dir: str, modes: tuple[str, ...] = ("int8",)) -> Worker:
        """Convert with the inputs chosen for the pair (random when none), then open the pair."""
        samples = self.controller.state.options.samples
        w = Worker(_in_worker, make_twins, str(path), str(out_dir), list(modes), samples, step="making TFLite twins",
                   models=(str(path),), wants_progress=True)
        w.finished.connect(guarded(self, self._twins_made))
        w.failed.connect(guarded(self, lambda msg: self.ui.show_error(f"Could not make TFLite twins: {msg}")))
        self.controller.run_task(w, f"Making TFLite twins of {Path(path).name}")
        return w

    def _twins_made(self, twins: dict[str, Any]) -> None:
        self.ui.open_files([twins["float"], next(iter(twins["quantized"].values()))], "A")
        samples = twins["provenance"].get("samples")
        if samples and not samples["settings"].get("source"):
            self.ui.show_error("The int8 twin was calibrated on random samples: choose real inputs (Layer error tab) "
                                   "and make the twins again for a faithful one.")
        else:
            self.ui.status(f"TFLite twins written beside {Path(twins['float']).name}", 8000)

