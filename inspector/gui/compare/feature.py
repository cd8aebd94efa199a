"""The comparison feature (`CompareFeature(controller, ui)`, composed by the main window):

- its `CompareController` (`.compare`), the `ComparisonSource` other features read
  (`.source`), and a Compare menu (Run Ctrl+R, Cancel, clear baseline);
- a "Layer error" tab: the inputs panel beside the layer error plot;
- an "Activations" tab for the selected layer; a "Worst samples" tab (list, per-class drop,
  and the selected sample's layerwise error);
- the output summary strip at the top of the window and the SQNR column of both layer lists.
Intents for its collaborators: `add_inputs_header`, `show_inputs_note`, `choose_sample_file`,
`show_page`, `show_summary_hint`.
Selection is shared through the main controller: clicking a layer selects its op in B (and the
matching op in A); selecting an op anywhere highlights its layer and shows its activations.
"""

from __future__ import annotations

from functools import lru_cache

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence
from PySide6.QtWidgets import QScrollArea, QSplitter, QVBoxLayout, QWidget

from inspector.core.compare.result import ComparisonResult
from inspector.core.viewdata.activations import activation_histogram
from inspector.core.viewdata.layer_series import error_grade, list_cells
from inspector.gui.compare.activation_view import ActivationView
from inspector.gui.compare.controller import CompareController, SampleRun
from inspector.gui.compare.inputs_panel import InputsPanel
from inspector.gui.compare.output_summary import OutputSummary
from inspector.gui.compare.source import ComparisonSource
from inspector.gui.compare.worst_samples import WorstSamplesView
from inspector.gui.protocols import ModelsController
from inspector.gui.ui_services import UiServices
from inspector.gui.views.layer_error_plot import LayerErrorPlot

GOOD, MID, BAD = QColor("#8fd694"), QColor("#f3e27a"), QColor("#f08a7e")


def grade_color(grade: float | None) -> QColor | None:
    """Green (0) through yellow (0.5) to red (1), in 1/200 steps (shared colours: 3,000 cells)."""
    if grade is None:
        return None
    return _grade_color(int(float(grade) * 200 + 0.5))  # (round() of a numpy scalar took 55 µs: 0.3 s per result)


def sqnr_color(sqnr_db: float) -> QColor | None:
    """A layer list cell's background for an SQNR in dB (`grade_color` of `error_grade`)."""
    return grade_color(error_grade(sqnr_db))


@lru_cache(maxsize=256)
def _grade_color(step: int) -> QColor:
    grade = step / 200
    a, b, t = (GOOD, MID, grade * 2) if grade <= 0.5 else (MID, BAD, grade * 2 - 1)
    rgb = lambda c: (c.redF(), c.greenF(), c.blueF())  # noqa: E731
    return QColor.fromRgbF(*(x + (y - x) * t for x, y in zip(rgb(a), rgb(b), strict=True)))


class CompareFeature(QObject):
    layer_shown = Signal(object)  # LayerResult | None: the layer the selection shows (the per-channel view follows)

    def __init__(self, controller: ModelsController, ui: UiServices) -> None:
        super().__init__(ui.parent)
        self.ui = ui
        self.controller = c = controller
        self.compare = cc = CompareController(c, ui.parent)
        self.source = ComparisonSource(cc, ui)
        self.inputs = InputsPanel()
        self.plot = LayerErrorPlot()
        self.activations = ActivationView()
        self.worst = WorstSamplesView()
        self.sample_plot = LayerErrorPlot()
        self.summary = OutputSummary()

        page = QSplitter(Qt.Orientation.Horizontal)
        scroll = QScrollArea()  # the form must not set a minimum height for the whole window
        scroll.setWidget(self.inputs)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setMinimumWidth(self.inputs.minimumSizeHint().width() + 16)
        left = QWidget()  # the form scrolls; its Run row stays pinned below it
        column = QVBoxLayout(left)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(scroll, 1)
        run_row = self.inputs.take_run_row()
        run_row.setContentsMargins(4, 0, 4, 4)
        column.addWidget(run_row)
        page.addWidget(left)
        page.addWidget(self.plot)
        page.setStretchFactor(1, 1)
        page.setSizes([280, 1100])
        self.page = page
        self.worst.add_side(self.sample_plot)  # below the per-class plot, beside the list
        self.worst_page = self.worst
        ui.add_tab("Layer error", page)
        ui.add_tab("Activations", self.activations)
        ui.add_tab("Worst samples", self.worst)
        ui.add_strip(self.summary)
        self._install_menu()

        self.inputs.run_requested.connect(lambda _o: self.run())
        self.inputs.cancel_requested.connect(cc.cancel)
        cc.started.connect(lambda: self.inputs.set_running(True, "Starting…"))
        cc.progress.connect(self.inputs.set_progress)
        cc.finished.connect(lambda: self.inputs.set_running(False))
        cc.failed.connect(self._failed)
        cc.cancelled.connect(lambda: self.inputs.status.setText("Cancelled; the previous result (if any) is still shown."))
        cc.result_changed.connect(self._result_changed)
        cc.baseline_changed.connect(lambda r: self.plot.set_baseline(r, cc.baseline_label))
        cc.sample_changed.connect(self._sample_changed)
        self.inputs.bind(cc)  # each widget bound to its option in the state, both ways
        self.inputs.field_edited.connect(self._field_edited)
        self.plot.layer_clicked.connect(self.select_layer)
        self.sample_plot.layer_clicked.connect(self.select_layer)
        self.activations.collect_requested.connect(cc.collect_values)
        self.worst.sample_selected.connect(cc.run_single_sample)
        c.selection_changed.connect(lambda _s: self._selection_changed())
        c.signature_changed.connect(lambda _k: cc.cancel())  # its result would be for the previous signature's ops

    # ------------------------------------------------------------------ intents
    def add_inputs_header(self, widget: QWidget) -> None:
        """A widget at the top of the comparison's inputs (the signature chooser)."""
        self.inputs.add_header(widget)

    def show_inputs_note(self, text: str) -> None:
        self.inputs.status.setText(text)

    def show_page(self) -> None:
        """Show the Layer error tab (the inputs beside the plot)."""
        self.ui.show_tab(self.page)

    def choose_sample_file(self) -> None:
        """Show the inputs panel with the file source chosen and open its file chooser."""
        self.show_page()
        panel = self.inputs
        panel.source.setCurrentIndex(panel.source.findData("file"))
        panel.choose_path()

    def show_summary_hint(self, text: str) -> None:
        """The summary strip's line while there is no result."""
        self.summary.label.setText(f"<i>{text}</i>")

    def _install_menu(self) -> None:
        m = self.ui.menu("Compare", "&Compare")
        self.act_run = QAction("&Run comparison", self.ui.parent, shortcut=QKeySequence("Ctrl+R"))
        self.act_run.triggered.connect(self.run)
        self.act_cancel = QAction("&Cancel comparison", self.ui.parent, shortcut=QKeySequence("Ctrl+."))
        self.act_cancel.triggered.connect(self.compare.cancel)
        self.act_clear = QAction("Clear &baseline series", self.ui.parent)
        self.act_clear.triggered.connect(self.compare.clear_baseline)
        self.act_isolated = QAction("SQNR column shows the &isolated error", self.ui.parent, checkable=True)
        self.act_isolated.setStatusTip("The layer lists' SQNR column: each layer's own (isolated) error instead of the "
                                       "accumulated one; needs a comparison run with 'own (isolated) error per layer'")  # fmt: skip
        self.act_isolated.setEnabled(False)
        self.act_isolated.toggled.connect(lambda _on: self._fill_error_columns(self.compare.result))
        for a in (self.act_run, self.act_cancel, self.act_clear):
            m.addAction(a)
        m.addSeparator()
        m.addAction(self.act_isolated)

    # ------------------------------------------------------------------ inputs
    def _field_edited(self, name: str, value: object) -> None:
        if name == "isolated":
            self._isolated_toggled(bool(value))

    def _isolated_toggled(self, on: bool) -> None:
        """The result shown was computed with or without the own error: say whether it still
        matches, and that a run is needed when it does not."""
        result = self.compare.result
        if result is None:
            return
        if result.isolated == on:
            self.inputs.status.setText("The result shown matches this setting again.")
        elif on:
            self.inputs.status.setText("Own (isolated) error on: run the comparison again to compute it "
                                       "(the result shown has the accumulated error only).")  # fmt: skip
        else:
            self.inputs.status.setText("Own (isolated) error off: the next run leaves it out "
                                       "(the result shown still has it).")  # fmt: skip

    def run(self) -> None:
        """Run the state's options (a path typed in the panel but not committed is set first)."""
        self.inputs.commit()
        self.compare.run()

    # ------------------------------------------------------------------ results
    def _result_changed(self, result: ComparisonResult | None) -> None:
        cc = self.compare
        self.plot.set_result(result)
        self.sample_plot.set_result(result)
        self.sample_plot.set_sample(None)
        self.summary.set_result(result, cc.task)
        folder = cc.run_options.samples.source if cc.run_options is not None else None
        note = f"Task metrics unavailable: {cc.task_error}" if cc.task_error else ""
        if result is not None and result.per_sample_outputs is None and not note:
            note = "Outputs are too large to keep per sample, so samples are not ranked."
        self.worst.set_task(cc.task, folder, note)
        self._fill_error_columns(result)
        self._selection_changed()
        if result is not None:
            self.ui.clear_error("compare")  # a failure of an earlier run is no longer what is shown
            self.inputs.status.setText(
                f"Done: {len(result.layers)} layers, {result.samples} samples in {result.elapsed_s:.2f} s "
                f"({result.runtime} runtime). {result.inputs}"
            )
        elif self.inputs.status.text().startswith("Done: "):
            self.inputs.status.setText("")  # the result it described is gone (another pair is open)

    def _sample_changed(self, run: SampleRun | None) -> None:
        for plot in (self.plot, self.sample_plot):
            plot.set_sample(run.result if run is not None else None, run.label if run is not None else "")
        if run is not None:
            self.inputs.status.setText(f"{run.label} ({run.result.sources[0]}) re-run alone: its layerwise error is in the plot.")
            self.ui.status(f"Layerwise error of {run.label} ({run.result.sources[0]}) added to the layer error plot", 8000)

    def _failed(self, message: str) -> None:
        self.inputs.set_running(False, f"Failed: {message}")
        self.ui.show_error(f"Comparison failed: {message}", owner="compare")

    def _fill_error_columns(self, result: ComparisonResult | None) -> None:
        """SQNR per op in both layer lists: accumulated, or isolated when chosen and available."""
        has_iso = result is not None and result.isolated
        self.act_isolated.setEnabled(bool(has_iso))
        isolated = bool(has_iso) and self.act_isolated.isChecked()
        ref = f" Reference: {result.reference}." if result is not None and result.reference else ""
        for slot, pane in self.ui.panes.items():
            pane.set_error_header("SQNR iso" if isolated else "SQNR",
                                  ("Isolated SQNR: the layer's own error (fed the quantized model's inputs)" if isolated
                                   else "SQNR of the layer's output in the last comparison, accumulated end to end "
                                        "(green: good, red: large error)") + ref)
            if result is None:
                pane.set_errors({})
                pane.set_causes({})
                pane.set_worst_channels({})
                continue
            # figures computed once per result (in the worker), tooltips when asked for (1,500 layers)
            causes, worst, cells = list_cells(result, float_side=slot == "A", isolated=isolated)
            pane.set_causes(dict(causes))
            pane.set_worst_channels(worst, sqnr_color)  # coloured when drawn: 6,000 colours per result took 25 ms
            pane.set_errors(cells, sqnr_color)

    # ------------------------------------------------------------------ selection
    def select_layer(self, op_index: int) -> None:
        """Select B's op `op_index` (the layer identity the plots emit) everywhere, with A's match."""
        if self.compare.result is None:
            return
        self.controller.select_op("B", op_index)

    def current_layer(self) -> int | None:
        """Position in result.layers of the selected tensor of B, else of the selected op of B."""
        r, sel = self.compare.result, self.controller.selection
        if r is None:
            return None
        tb, ob = sel.tensor("B"), sel.op("B")
        for i, layer in enumerate(r.layers):
            if tb is not None and layer.quant_tensor == tb:
                return i
        return r.layer_position(ob)

    def _selection_changed(self) -> None:
        i = self.current_layer()
        r = self.compare.result
        op = r.layers[i].op_index if r is not None and i is not None else None
        self.layer_shown.emit(r.layers[i] if r is not None and i is not None else None)  # its channels and slices
        self.plot.set_selected(op)
        self.sample_plot.set_selected(op)
        if r is None:
            self.activations.show_layer(None, None)
            return
        if i is None:
            self.activations.show_layer(None, None, "The selected op or tensor has no layer in the comparison (select a layer of model B, or its match in A).")
            return
        layer = r.layers[i]
        kept = r.kept.get(layer.quant_tensor)
        if kept is None:
            self.activations.show_layer(layer, None, f"Values of {layer.tensor_name} were not kept in this run (large model).", depth=i)
            return
        self.activations.show_layer(layer, activation_histogram(layer, kept), depth=i)


