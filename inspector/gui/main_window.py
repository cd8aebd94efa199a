"""Main window: model A and model B side by side above a tab area for the analysis views.

It composes the features (`_compose`): each is built with the models-and-selection controller,
the `UiServices` (errors, status, tabs, menus, strips) and the collaborators it calls, and adds
its own tabs and menus; the window keeps them in one typed `features` table (`Features`) and owns no feature.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from PySide6.QtCore import QByteArray, QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFileDialog,
    QMainWindow,
    QMessageBox,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from inspector import __version__
from inspector.core.errors import InspectorError
from inspector.core.keras.detect import is_keras_path
from inspector.core.runtime.versions import runtime_versions
from inspector.core.state.app_state import AppState
from inspector.core.tflite.litertlm import is_bundle_file, read_bundle, split_address
from inspector.gui.binding import quietly
from inspector.gui.compare.feature import CompareFeature
from inspector.gui.diagnosis.feature import DiagnosisFeature
from inspector.gui.example.feature import ExampleFeature
from inspector.gui.graph import GraphController
from inspector.gui.interpreter import (
    collect_on_a_gui_timer,
    give_way_to_the_window,
    switch_threads_often,
)
from inspector.gui.keras.feature import KerasFeature
from inspector.gui.models.controller import SLOTS, Controller, Selection
from inspector.gui.opmath.feature import OpMathFeature
from inspector.gui.pair.feature import PairFeature
from inspector.gui.parity.feature import ParityFeature
from inspector.gui.recent import RecentFiles
from inspector.gui.requantize.feature import RequantizeFeature
from inspector.gui.review.feature import ReviewFeature
from inspector.gui.session.feature import SessionFeature
from inspector.gui.signature.feature import SignatureFeature
from inspector.gui.ui_services import UiServices
from inspector.gui.views.file_drop import TfliteDropTarget
from inspector.gui.views.model_pane import ModelPane
from inspector.gui.views.sections_dialog import SectionsDialog
from inspector.gui.views.sizing import (
    PANES_SHARE,
    TABS_ROOM,
    ResizedSplitter,
    fit_inside_screen,
    fit_to_screen,
    pane_share,
)
from inspector.gui.views.status import ErrorBanner, TaskIndicator
from inspector.gui.weights.feature import WeightsFeature
from inspector.gui.workers import Worker

if TYPE_CHECKING:
    from inspector.gui.compare.controller import CompareController
    from inspector.gui.requantize.controller import RequantizeController
    from inspector.gui.requantize.requantize_panel import RequantizePanel
    from inspector.gui.weights.per_channel_view import PerChannelView
    from inspector.gui.weights.weight_histogram import WeightHistogramView

APP_TITLE = "TFLite Quantization Inspector"


def about_versions() -> list[tuple[str, str]]:
    """The runtime versions the About box lists (core's list plus PySide6 / Qt and pyqtgraph)."""
    import pyqtgraph
    import PySide6
    from PySide6.QtCore import qVersion

    return runtime_versions([("PySide6 / Qt", f"{PySide6.__version__} / Qt {qVersion()}"), ("pyqtgraph", pyqtgraph.__version__)])


FILE_FILTER = ("Models (*.tflite *.litertlm *.keras *.h5 *.hdf5);;TFLite models (*.tflite);;LiteRT-LM bundles (*.litertlm);;"
               "Keras models (*.keras *.h5 *.hdf5);;All files (*)")  # the first (default) filter shows every kind it opens



@dataclass(frozen=True)
class Features:
    """The composed features by name (`window.features`), typed: the window's intents, the app
    and tests reach a feature as `window.features.compare`, never through each other."""

    weights: WeightsFeature
    weights_view: WeightHistogramView
    per_channel_view: PerChannelView
    compare: CompareController
    compare_features: CompareFeature
    requantize: RequantizeController
    requantize_features: RequantizeFeature
    requantize_panel: RequantizePanel
    session: SessionFeature
    review: ReviewFeature
    opmath: OpMathFeature
    signature_features: SignatureFeature
    pair: PairFeature
    example_autorun: ExampleFeature
    parity: ParityFeature
    keras: KerasFeature
    diagnosis_features: DiagnosisFeature
    graph: GraphController

    NAMES: ClassVar[frozenset[str]]

    def __getitem__(self, name: str) -> object:
        if name not in self.NAMES:
            raise KeyError(name)
        return getattr(self, name)

    def __contains__(self, name: object) -> bool:
        return name in self.NAMES


Features.NAMES = frozenset(f.name for f in fields(Features))

class MainWindow(TfliteDropTarget, QMainWindow):
    def __init__(self, controller: Controller | None = None, settings: QSettings | None = None,
                 state: AppState | None = None) -> None:
        super().__init__()
        switch_threads_often()  # the GUI thread's turn comes within 0.05 ms while Workers run Python
        collect_on_a_gui_timer()  # cyclic collections (which destroy Qt objects) on this thread only
        give_way_to_the_window()  # core's long loops in Worker threads wait while this thread is busy
        self.controller = controller or Controller(self, state)
        self.state = self.controller.state  # the Qt-free application state the controllers share
        self.settings = settings if settings is not None else QSettings()
        self.recent = RecentFiles(self.settings)
        self.accept_tflite_drops()  # onto the window: first file -> A, second -> B (files_dropped_here)
        fit_to_screen(self)  # 1400×900, or the screen's available area when smaller

        self.sections_dialog: SectionsDialog | None = None
        self.panes = {s: ModelPane(s) for s in SLOTS}
        self.banner = ErrorBanner()
        self._banner_slot: str | None = None
        self._banner_owner: str | None = None
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)

        self.pane_splitter = QSplitter(Qt.Orientation.Horizontal)
        for p in self.panes.values():
            self.pane_splitter.addWidget(p)
        self.main_splitter = ResizedSplitter(Qt.Orientation.Vertical)
        self.main_splitter.addWidget(self.pane_splitter)
        self.main_splitter.addWidget(self.tabs)
        self.main_splitter.setSizes([400, 500])  # until it has a height: then `default_split`; F9 collapses the panes
        self._default_split = True  # the panes' share follows the window's height until the user drags the handle
        self._check_restored_split = False
        self._fit_when_shown = False
        self._last_pair: tuple[str | None, str | None] = (None, None)
        self.main_splitter.resized.connect(self._splitter_resized)
        for sp in (self.main_splitter, self.pane_splitter):  # drag to resize, or collapse a side entirely
            sp.setChildrenCollapsible(True)
            sp.setHandleWidth(7)
        self.main_splitter.setCollapsible(1, False)  # the tabs never vanish
        self.main_splitter.splitterMoved.connect(lambda *_: self._splitter_moved())
        self.tabs.currentChanged.connect(lambda _i: self._tab_changed())
        central = QWidget()
        lay = QVBoxLayout(central)
        lay.setContentsMargins(4, 4, 4, 0)
        lay.addWidget(self.banner)
        lay.addWidget(self.main_splitter, 1)
        self.setCentralWidget(central)
        self.tasks = TaskIndicator()
        self.statusBar().addPermanentWidget(self.tasks)

        at = lay.indexOf(self.banner) + 1  # feature strips (summary, pair notices) go below the banner
        self.ui = UiServices(self, self.panes, self.settings, self.recent, lay, at)  # what features use of the window
        self._build_menus()
        self._connect()
        self._update_title()
        self.features = self._compose(self.controller, self.ui)
        self._restore_state()

    @staticmethod
    def _compose(c: Controller, ui: UiServices) -> Features:
        """Build the features, each with the collaborators it calls (no feature reaches another
        through the window); the result names them for the window's own intents and for tests."""
        weights = WeightsFeature(c, ui)  # Weights and Per-channel quantization tabs
        compare_features = CompareFeature(c, ui)  # Run, layer error plot, activations, worst samples
        compare = compare_features.compare
        requantize_tab = ui.tab_count()
        requantize_features = RequantizeFeature(c, ui, compare)  # plan, versions, deltas, suggest, save
        requantize = requantize_features.rq
        opmath = OpMathFeature(c, ui, compare_features.source)  # Op math tab
        session = SessionFeature(c, ui, compare_features.source, compare, requantize)  # File > Open / Save session
        review = ReviewFeature(c, ui, compare_features.source)  # Audit tab, File > Export report
        signature_features = SignatureFeature(c, ui, compare_features)  # the chooser above the comparison's inputs
        pair = PairFeature(c, ui, compare, compare_features)  # pair check, random-inputs notice, inputs per pair
        example_autorun = ExampleFeature(c, ui, compare, compare_features, session)  # the bundled pair opens compared
        parity = ParityFeature(c, ui)  # Runtime parity tab
        keras = KerasFeature(c, ui, opmath)  # Keras / SavedModel / QAT models as A, Keras / QAT tab, twins
        session.add_part("keras", keras.session_part, keras.restore_session_part)  # the Keras source, not its cached twin
        diagnosis_features = DiagnosisFeature(c, ui, compare, requantize_features, parity.controller)  # Apply fix, repro
        compare_features.layer_shown.connect(weights.per_channel_view.set_layer)  # the selected layer's channels and slices
        requantize.inputs_wanted.connect(compare_features.choose_sample_file)  # "Choose inputs…" before a random calibration
        graph = GraphController(c, ui, compare, requantize, review)  # Graph tab: B's ops coloured by the comparison
        ui.move_tab_last(requantize_tab)  # Requantize stays the last tab
        return Features(weights=weights, weights_view=weights.weights_view, per_channel_view=weights.per_channel_view,
                        compare=compare, compare_features=compare_features, requantize=requantize,
                        requantize_features=requantize_features, requantize_panel=requantize_features.panel,
                        session=session, review=review, opmath=opmath, signature_features=signature_features,
                        pair=pair, example_autorun=example_autorun, parity=parity, keras=keras,
                        diagnosis_features=diagnosis_features, graph=graph)

    # ------------------------------------------------------------------ extension points
    def add_tab(self, title: str, widget: QWidget) -> int:
        """Add an analysis view (layer error plot, activations, audit...) to the tab area."""
        return self.tabs.addTab(widget, title)

    # ------------------------------------------------------------------ intents
    def open_model(self, slot: str, path: str | Path, background: bool = True) -> Worker | None:
        """Open a model in `slot`; a whole .litertlm bundle first shows its sections (None); a
        Keras model or SavedModel folder opens through the Keras feature (its float twin as A)."""
        features = self.__dict__.get("features")
        if is_keras_path(path) and features is not None:
            return features.keras.open_keras(slot, path)
        if split_address(path)[1] is None and is_bundle_file(path):
            self.choose_section(slot, str(path))
            return None
        return self.controller.open_model(slot, path, background=background)

    def choose_section(self, slot: str, path: str) -> SectionsDialog | None:
        """List the bundle's sections; the chosen TFLite section opens as `path#N` in A or B."""
        try:
            bundle = read_bundle(path)
        except InspectorError as e:
            self.show_error(f"Could not open model {slot}: {e}", slot)
            return None
        dlg = SectionsDialog(bundle, slot, self)
        dlg.section_chosen.connect(lambda s, address: self.open_model(s, address))
        dlg.finished.connect(lambda _r, d=dlg: self._section_dialog_closed(d))
        self.sections_dialog = dlg  # the open one (tests, screenshots)
        dlg.open()  # window-modal, does not block the event loop
        return dlg

    def _section_dialog_closed(self, dlg: SectionsDialog) -> None:
        if self.sections_dialog is dlg:
            self.sections_dialog = None
        dlg.deleteLater()

    def open_files(self, paths: list[str], slot: str | None = None) -> list[Worker]:
        """First file -> slot (default: A, or B when only A is loaded), second -> the other; two
        model files open as one pair (`Controller.open_pair`: one worker). Bundles show their
        sections instead (no worker for them); a Keras model opens through its feature."""
        if not paths:
            return []
        if slot is None:
            slot = "B" if len(paths) == 1 and self.controller.models["A"] is not None else "A"
        order = [slot, "B" if slot == "A" else "A"]
        by_slot = dict(zip(order, paths[:2], strict=False))
        if len(by_slot) == 2 and not any(is_keras_path(p) or (split_address(p)[1] is None and is_bundle_file(p)) for p in paths[:2]):
            return [self.controller.open_pair(by_slot["A"], by_slot["B"])]  # one pair change, never the new A with the old B
        workers = [self.open_model(s, p) for s, p in by_slot.items()]
        return [w for w in workers if w is not None]

    def choose_file(self, slot: str) -> None:
        what = "float model (A)" if slot == "A" else "quantized model (B)"
        path, _ = QFileDialog.getOpenFileName(self, f"Open {what}", self.recent.last_dir, FILE_FILTER)
        if path:
            self.open_model(slot, path)

    def show_error(self, text: str, slot: str | None = None, owner: str | None = None) -> None:
        """The red banner (and the status bar). `slot`: a model whose next open hides it; `owner`:
        the feature whose next success hides it (`clear_error(owner)`)."""
        self._banner_slot = slot
        self._banner_owner = owner
        self.banner.show_message(text)
        self.statusBar().showMessage(text, 10000)

    def clear_error(self, owner: str) -> None:
        """Hide the banner if it shows `owner`'s error (a later run of that feature succeeded)."""
        if self.banner.isVisible() and self._banner_owner == owner:
            self.banner.hide()
            self._banner_owner = None

    def show_about(self) -> QMessageBox:
        rows = "".join(f"<tr><td style='white-space:nowrap'>{html.escape(k)}</td><td>&nbsp;&nbsp;{html.escape(v)}</td></tr>"
                       for k, v in about_versions())
        box = QMessageBox(QMessageBox.Icon.Information, f"About {APP_TITLE}",
                          f"<b>{APP_TITLE}</b> {__version__}<br><br>Compare a float TensorFlow Lite / LiteRT "
                          "model with its quantized twin: quantization parameters, weights and errors."
                          f"<br><br><table>{rows}</table>", parent=self)
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        box.setStyleSheet("QLabel#qt_msgbox_label { min-width: 460px; }")  # the version table on one line per package
        box.open()  # window-modal, does not block the event loop
        self._about = box
        return box

    # ------------------------------------------------------------------ wiring
    def _build_menus(self) -> None:
        m = self.ui.register_menu("File", self.menuBar().addMenu("&File"))
        self.act_open_a = self._action(m, "Open &float model (A)…", QKeySequence("Ctrl+O"), lambda: self.choose_file("A"))
        self.act_open_b = self._action(m, "Open &quantized model (B)…", QKeySequence("Ctrl+Shift+O"), lambda: self.choose_file("B"))
        self.recent_menu = m.addMenu("Open &recent")
        self.ui.register_action("recent", self.recent_menu.menuAction())
        self.recent_menu.aboutToShow.connect(self._fill_recent)
        self._fill_recent()
        m.addSeparator()
        self._action(m, "Close model A", None, lambda: self.controller.close_model("A"))
        self._action(m, "Close model B", None, lambda: self.controller.close_model("B"))
        m.addSeparator()
        self.act_quit = self.ui.register_action("quit", self._action(m, "&Quit", QKeySequence("Ctrl+Q"), self.close))
        v = self.ui.register_menu("View", self.menuBar().addMenu("&View"))
        self.act_panes = self._action(v, "Show &model panes (A, B)", QKeySequence("F9"), self.show_panes)
        self.act_panes.setCheckable(True)
        self.act_panes.setChecked(True)
        self.ui.register_action("panes", self.act_panes)  # the graph's Maximize toggles it
        self.act_panes.setStatusTip("Hide the model panes so the tabs take the whole height (F9)")
        h = self.ui.register_menu("Help", self.menuBar().addMenu("&Help"))
        self.act_about = self._action(h, "&About", QKeySequence("F1"), self.show_about)

    def _action(self, menu, text, shortcut, slot) -> QAction:
        a = QAction(text, self)
        if shortcut is not None:
            a.setShortcut(shortcut)
        a.triggered.connect(slot)
        menu.addAction(a)
        return a

    def _fill_recent(self) -> None:
        self.recent_menu.clear()
        entries = self.recent.entries()
        pairs = self.recent.pairs()
        for a, b in pairs:  # pairs first: both files open at once, as a drop of both
            act = self.recent_menu.addAction(f"{Path(a).name} ↔ {Path(b).name}")
            act.setToolTip(f"A: {a}\nB: {b}")
            act.setStatusTip(f"A: {a} · B: {b}")
            act.triggered.connect(lambda _=False, pa=a, pb=b: self.open_files([pa, pb], "A"))
        if pairs and entries:
            self.recent_menu.addSeparator()
        for slot, path in entries:
            label = "float (A)" if slot == "A" else "quantized (B)"
            act = self.recent_menu.addAction(f"{Path(path).name} — {label}")
            act.setToolTip(path)
            act.setStatusTip(path)
            act.triggered.connect(lambda _=False, s=slot, p=path: self.open_model(s, p))
        if entries or pairs:
            self.recent_menu.addSeparator()
            self.recent_menu.addAction("Clear list", self.recent.clear)
        self.recent_menu.setEnabled(bool(entries or pairs))

    def _connect(self) -> None:
        c = self.controller
        for pane in self.panes.values():
            pane.op_activated.connect(c.select_op)
            pane.tensor_activated.connect(c.select_tensor)
            pane.files_dropped.connect(lambda slot, paths: self.open_files(paths, slot))
            pane.close_requested.connect(c.close_model)
        c.loading.connect(lambda slot, path: self.panes[slot].set_loading(path))
        c.slot_changed.connect(self._model_changed)
        c.load_failed.connect(self._load_failed)
        c.selection_changed.connect(self._selection_changed)
        c.task_started.connect(self.tasks.track)
        c.error.connect(self.show_error)

    def _model_changed(self, slot: str) -> None:
        c = self.controller
        model = c.models[slot]
        self.panes[slot].set_model(model, lambda i, s=slot: c.counterpart_op(s, i))
        other = "B" if slot == "A" else "A"
        self.panes[other].refresh_pairs(lambda i, s=other: c.counterpart_op(s, i))
        if model is not None:
            self.recent.add(slot, model.path)  # a pair is remembered once its pair check says twins (pair feature)
            if self._banner_slot == slot:
                self.banner.hide()
            self.statusBar().showMessage(f"Opened {model.path} as {slot}", 5000)
        if c.pairing_note:
            self.statusBar().showMessage(c.pairing_note, 10000)
        self._update_title()
        self._start_tables_of_a_new_pair()

    def _pair_shown(self) -> tuple[str | None, str | None]:
        """The open pair as one identity (`AppState.pair_identity`): (A, v0) while model B is one of the versions of v0."""
        return self.state.pair_identity()

    def _start_tables_of_a_new_pair(self) -> None:
        """Another pair: every table of the window starts at its top-left (they kept the old
        pair's scroll positions) and the tensor tables without a filter, sorted by # (they kept
        the old pair's). Another version of model B of the same pair keeps them: the same spot in
        v1 and v2 is what a user compares. The plots fit their new data themselves."""
        pair = self._pair_shown()
        if pair == self._last_pair:
            return
        self._last_pair = pair
        for pane in self.panes.values():
            pane.tensors.reset_view()
        for view in self.findChildren(QAbstractItemView):
            view.verticalScrollBar().setValue(0)
            view.horizontalScrollBar().setValue(0)

    def _load_failed(self, slot: str, path: str, message: str) -> None:
        self.panes[slot].set_model(self.controller.models[slot], lambda i: self.controller.counterpart_op(slot, i))
        self.show_error(f"Could not open model {slot}: {message}", slot)

    def _selection_changed(self, sel: Selection) -> None:
        for slot, pane in self.panes.items():
            pane.show_selection(sel.op(slot), sel.tensor(slot))

    def _update_title(self) -> None:
        names = [Path(m.path).name if m else "—" for m in self.controller.models.values()]
        self.setWindowTitle(APP_TITLE if names == ["—", "—"] else f"{names[0]} ↔ {names[1]} — {APP_TITLE}")

    # ------------------------------------------------------------------ panes
    def show_panes(self, on: bool) -> None:
        """Show or collapse the model panes (A, B); collapsed, the tabs take the whole height."""
        sizes = self.main_splitter.sizes()
        total = sum(sizes)
        self._default_split = False  # the user chose: resizing the window scales it from now on
        if on and sizes[0] == 0:
            top = getattr(self, "_panes_height", 0) or pane_share(total, self._panes_wanted())
            self.main_splitter.setSizes([top, max(total - top, 1)])
        elif not on and sizes[0] > 0:
            self._panes_height = sizes[0]
            self.main_splitter.setSizes([0, total])
        self._sync_panes_action()

    def _panes_wanted(self) -> int:
        return max(p.height_for() for p in self.panes.values())

    def default_split(self) -> None:
        """The panes' default share of the height (`sizing.pane_share`): enough for 12 op rows
        when the tabs keep their room, never less than 4/9 (the share it always had); less while
        the tab shown needs more height than that leaves it (the Requantize tab at 1280×800 sat
        behind a scroll bar, its Save… buttons cut), down to 3 op rows per pane."""
        total = sum(self.main_splitter.sizes())
        if total > 0:
            top = pane_share(total, self._panes_wanted())
            need = self._tab_height_needed()
            if need > total - top:
                top = max(min(top, total - need), max(p.height_for(3, 3) for p in self.panes.values()))
            self.main_splitter.setSizes([top, total - top])

    def _tab_height_needed(self) -> int:
        """Height the current tab needs to show its page whole: its scroll area's content at its
        minimum, plus what the page and the tab bar hold around it (0: no scroll area)."""
        page = self.tabs.currentWidget()
        if page is None:
            return 0
        areas = page.findChildren(QScrollArea, options=Qt.FindChildOption.FindDirectChildrenOnly)
        if not areas or areas[0].widget() is None:
            return 0
        sa = areas[0]
        inner = sa.widget()
        if inner is None:
            return 0
        around = max(page.height() - sa.viewport().height(), 0)
        wanted = getattr(page, "wanted_height", None)  # more than its minimum, when the panes can give it
        inner_h = wanted() if callable(wanted) else inner.minimumSizeHint().height()
        return inner_h + around + self.tabs.tabBar().sizeHint().height() + 4

    def _tab_changed(self) -> None:
        if self._default_split and not self.panes_collapsed():
            self.default_split()

    def _splitter_moved(self) -> None:
        self._default_split = False  # dragged by the user
        self._sync_panes_action()

    def _splitter_resized(self) -> None:
        if self._check_restored_split and sum(self.main_splitter.sizes()) > 0:
            self._check_restored_split = False
            if not self._restored_split_usable():
                self._default_split = True  # a collapsed or too small restored share: the default again
                self.pane_splitter.setSizes([1, 1])
        if self._default_split:
            self.default_split()
            self._sync_panes_action()

    def _restored_split_usable(self) -> bool:
        """The restored shares show both panes, each op list with 3 rows or more, and leave the
        tabs their room (a split saved at 1920×1080 left them ~210 px at 1280×800)."""
        a, b = self.pane_splitter.sizes()
        if min(a, b) <= 0:
            return False
        top, tabs = self.main_splitter.sizes()
        total = top + tabs
        if top < max(p.height_for(3, 3) for p in self.panes.values()):
            return False
        saved = self.settings.value("window/split_height")
        shrunk = saved is not None and total < 0.9 * float(saved)  # saved on a taller window (a larger screen)
        return not shrunk or tabs >= min(TABS_ROOM, total - round(total * PANES_SHARE))

    def panes_collapsed(self) -> bool:
        return self.main_splitter.sizes()[0] == 0

    def _sync_panes_action(self) -> None:
        with quietly(self.act_panes):
            self.act_panes.setChecked(not self.panes_collapsed())

    # ------------------------------------------------------------------ window state
    def _restore_state(self) -> None:
        for key, fn in (
            ("window/geometry", self.restoreGeometry),
            ("window/state", self.restoreState),
            ("window/main_splitter", self.main_splitter.restoreState),
            ("window/pane_splitter", self.pane_splitter.restoreState),
        ):
            v = self.settings.value(key)
            if isinstance(v, QByteArray | bytes) and not (saved := QByteArray(v)).isEmpty() and fn(saved):
                if key == "window/geometry":
                    fit_inside_screen(self)  # saved on a larger screen (or with an old, larger minimum)
                    self._fit_when_shown = True  # again with the frame, which exists once shown
                elif key == "window/main_splitter":
                    self._default_split = False
                    self._check_restored_split = True  # checked once it has a height
        self._sync_panes_action()

    def save_state(self) -> None:
        self.settings.setValue("window/geometry", self.saveGeometry())
        self.settings.setValue("window/state", self.saveState())
        self.settings.setValue("window/main_splitter", self.main_splitter.saveState())
        self.settings.setValue("window/split_height", sum(self.main_splitter.sizes()))
        self.settings.setValue("window/pane_splitter", self.pane_splitter.saveState())
        self.settings.sync()

    def showEvent(self, e) -> None:  # noqa: N802
        super().showEvent(e)
        if self._fit_when_shown:
            self._fit_when_shown = False
            fit_inside_screen(self)

    def files_dropped_here(self, paths: list[str]) -> None:
        self.open_files(paths)

    def closeEvent(self, e) -> None:
        self.save_state()
        self.tasks.cancel_all()
        super().closeEvent(e)
