"""The "Graph" tab: a toolbar (search by name or op index, zoom, fit, go to worst, the colour
metric, show A beside B), B's graph and optionally A's beside it, the legend and a status line.
It only draws: the controller (`controller.py`) gives it graphs, layouts and styles from
`core.graph` and turns its clicks into the app's selection."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from inspector.core.graph.metric_names import METRICS
from inspector.core.graph.scales import METRIC_LABELS
from inspector.core.graph.style import BADGES, Legend
from inspector.gui.graph.canvas import GraphCanvas
from inspector.gui.graph.minimap import GraphMinimap


class LegendBar(QLabel):
    """The legend as one wrapping line of rich text (never widens the window)."""

    def __init__(self) -> None:
        super().__init__()
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)

    def set_legend(self, legend: Legend) -> None:
        sw = "".join(f'<span style="background-color:{fill}">&nbsp;&nbsp;&nbsp;&nbsp;</span>&nbsp;{escape(label)}&nbsp;&nbsp; '
                     for label, fill in legend.items)  # fmt: skip
        badges = "".join(f'<span style="background-color:{colour};color:white">&nbsp;{escape(letter)}&nbsp;</span>&nbsp;{escape(meaning)}&nbsp;&nbsp; '
                         for letter, colour, meaning in BADGES.values())  # fmt: skip
        self.setText(f"<b>{escape(legend.title)}</b>&nbsp;&nbsp; {sw}&nbsp;&nbsp;&nbsp; {badges}"
                     '<span style="background-color:#444">&nbsp;</span>&nbsp;has constant inputs (weights)')  # fmt: skip


SHORT_LABELS = {"sqnr": "SQNR", "isolated": "own SQNR", "worst_channel": "worst channel",
                "clip": "clip rate", "range_use": "range use", "cause": "cause"}  # fmt: skip


class GraphView(QWidget):
    op_clicked = Signal(str, int)  # slot ("A" | "B"), op index in that model
    metric_changed = Signal(str)
    show_a_toggled = Signal(bool)
    search_requested = Signal(str)
    worst_requested = Signal()
    room_toggled = Signal(bool)  # the graph asks for the whole window (the model panes hidden)

    def __init__(self) -> None:
        super().__init__()
        self.canvas = {"B": GraphCanvas(), "A": GraphCanvas()}
        self.search = QLineEdit()
        self.search.setPlaceholderText("Find op: name or index (Enter: next)")
        self.search.setClearButtonEnabled(True)
        self.search.setMaximumWidth(280)
        self.search.setMinimumWidth(90)
        self.metric_box = QComboBox()
        self.metric_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.metric_box.setMinimumContentsLength(13)  # the tab must not widen the window (the widest tab sets its minimum)
        self.metric_box.setToolTip("Colour the ops by this metric of the comparison, or by the diagnosed cause")
        for m in METRICS:
            self.metric_box.addItem(SHORT_LABELS[m], m)
            self.metric_box.setItemData(self.metric_box.count() - 1, METRIC_LABELS[m], Qt.ItemDataRole.ToolTipRole)
        self.btn_fit = QPushButton("Fit")
        self.btn_fit.setToolTip("Fit the width at a readable zoom, on the selected (else the worst) op; a small graph whole. "
                                "Again: the whole model (the strip on the right shows it and where the view is)")
        self.btn_in, self.btn_out = QPushButton("+"), QPushButton("−")
        for b in (self.btn_in, self.btn_out):
            b.setFixedWidth(32)
        self.btn_worst = QPushButton("Go to worst")
        self.btn_worst.setToolTip("Select the op with the worst value of the chosen metric (or the worst diagnosed cause)")
        self.subgraph = QComboBox()  # B's other subgraphs (control flow, other signatures): structure only
        self.subgraph.setToolTip("Draw another subgraph of B (a control-flow body, another signature's) as structure")
        self.subgraph.setVisible(False)
        self.subgraph.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.subgraph.setMinimumContentsLength(18)
        self.btn_room = QPushButton("⤢")  # narrow: the tab must not widen the window
        self.btn_room.setFixedWidth(32)
        self.btn_room.setCheckable(True)
        self.btn_room.setToolTip("Maximize: give the graph the window's height, the model panes hidden (again, or F9: back)")
        self.show_a = QCheckBox("A beside B")
        self.show_a.setToolTip("Model A's graph beside B's: the selected op's partner is outlined, A's ops without a partner in B dotted red")
        self.status = QLabel("Open a model to see its graph.")
        self.status.setWordWrap(True)  # a long line must not widen the window
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.legend = LegendBar()

        bar = QHBoxLayout()
        bar.addWidget(self.search)
        for w in (self.btn_out, self.btn_in, self.btn_fit, self.btn_worst, self.btn_room):
            bar.addWidget(w)
        bar.addSpacing(8)
        bar.addWidget(self.metric_box)
        bar.addWidget(self.show_a)
        bar.addStretch(1)
        self.titles = {s: QLabel(f"<b>{'B (quantized)' if s == 'B' else 'A (float)'}</b>") for s in ("A", "B")}
        self.split = QSplitter(Qt.Orientation.Horizontal)
        self.boxes: dict[str, QWidget] = {}
        for s in ("A", "B"):
            self.boxes[s] = box = QWidget()
            v = QVBoxLayout(box)
            v.setContentsMargins(0, 0, 0, 0)
            head = QHBoxLayout()
            head.addWidget(self.titles[s])
            if s == "B":
                head.addWidget(self.subgraph)
            head.addStretch(1)
            v.addLayout(head)
            if s == "B":  # beside B: the whole model in its colours (click to look there)
                self.minimap = GraphMinimap(self.canvas[s])
                row = QHBoxLayout()
                row.setSpacing(2)
                row.addWidget(self.canvas[s], 1)
                row.addWidget(self.minimap)
                v.addLayout(row, 1)
            else:
                v.addWidget(self.canvas[s], 1)
            self.split.addWidget(box)
        self.boxes["A"].setVisible(False)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(4, 4, 4, 4)
        lay.addLayout(bar)
        lay.addWidget(self.legend)
        lay.addWidget(self.split, 1)
        lay.addWidget(self.status)

        for s, c in self.canvas.items():
            c.op_clicked.connect(lambda op, slot=s: self.op_clicked.emit(slot, op))
        self.metric_box.currentIndexChanged.connect(lambda _i: self.metric_changed.emit(self.metric_box.currentData()))
        self.show_a.toggled.connect(self._toggle_a)
        self.search.returnPressed.connect(lambda: self.search_requested.emit(self.search.text()))
        self.btn_worst.clicked.connect(self.worst_requested)
        self.btn_room.toggled.connect(self.room_toggled)
        self.btn_fit.clicked.connect(lambda: self._each(lambda c: c.fit()))
        self.btn_in.clicked.connect(lambda: self._each(lambda c: c.zoom(1.25)))
        self.btn_out.clicked.connect(lambda: self._each(lambda c: c.zoom(0.8)))

    def _each(self, act: Callable[[GraphCanvas], None]) -> None:
        for c in self._visible():
            act(c)

    def _visible(self) -> list[GraphCanvas]:
        return [self.canvas["B"]] + ([self.canvas["A"]] if self.show_a.isChecked() else [])

    def _toggle_a(self, on: bool) -> None:
        self.boxes["A"].setVisible(on)
        if on:
            self.split.setSizes([self.split.width() // 2] * 2)
        self.show_a_toggled.emit(on)

    def current_metric(self) -> str:
        return self.metric_box.currentData()
