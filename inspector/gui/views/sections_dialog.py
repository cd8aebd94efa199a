"""The sections of a `.litertlm` bundle (tokenizer, metadata, TFLite models, with their sizes),
from `core.tflite.litertlm.read_bundle`; the user opens a TFLite section in slot A or B, which
the window then loads as `BUNDLE.litertlm#N`. Window-modal, never blocking the event loop."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLabel,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
)

from inspector.core.tflite.litertlm import Bundle, Section

COLUMNS = ("#", "Section", "Size", "Metadata")
KIND_LABELS = {
    "tflite_model": "TFLite model",
    "tflite_weights": "TFLite weights",
    "sp_tokenizer": "SentencePiece tokenizer",
    "hf_tokenizer_zlib": "Hugging Face tokenizer (zlib)",
    "llm_metadata_proto": "LLM metadata",
    "generic_binary_data": "binary data",
}


def kind_text(section: Section) -> str:
    """A readable name of the section's type (the raw type name in the tooltip)."""
    return KIND_LABELS.get(section.kind, section.kind.replace("_", " "))


def size_text(n: int) -> str:
    """Bytes as B / KiB / MiB / GiB (one decimal above bytes), with the exact count for the tooltip."""
    for unit, div in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= div:
            return f"{n / div:,.1f} {unit}"
    return f"{n} B"


def metadata_text(section: Section) -> str:
    return ", ".join(f"{k}={v}" for k, v in section.items)


def section_address(bundle: Bundle, index: int) -> str:
    return f"{bundle.path}#{index}"


class SectionsDialog(QDialog):
    section_chosen = Signal(str, str)  # slot, address 'BUNDLE.litertlm#N'

    def __init__(self, bundle: Bundle, slot: str = "A", parent=None) -> None:
        super().__init__(parent)
        self.bundle, self.slot = bundle, slot
        self.setWindowTitle(f"Sections of {Path(bundle.path).name}")
        version = ".".join(map(str, bundle.version))
        system = ", ".join(f"{k}={v}" for k, v in bundle.system)
        n_tfl = sum(s.is_tflite for s in bundle.sections)
        head = QLabel(
            f"<b>{Path(bundle.path).name}</b> — LiteRT-LM bundle, format {version}, {len(bundle.sections)} sections "
            f"({n_tfl} TFLite model{'s' if n_tfl != 1 else ''})" + (f"<br>system metadata: {system}" if system else "")
            + "<br>Choose a TFLite model section and open it as model A (float) or B (quantized)."
        )
        head.setWordWrap(True)
        head.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        head.setToolTip(bundle.path)

        self.table = QTableWidget(len(bundle.sections), len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        for row, s in enumerate(bundle.sections):
            cells = (str(s.index), kind_text(s), size_text(s.size), metadata_text(s))
            tips = ("", f"section type {s.kind}", f"bytes {s.offset:,}–{s.offset + s.size:,} ({s.size:,} bytes)", cells[3])
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                item.setToolTip(tips[col])
                if col in (0, 2):
                    item.setTextAlignment(int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter))
                if not s.is_tflite:
                    item.setForeground(self.palette().placeholderText())
                self.table.setItem(row, col, item)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)

        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.open_a = QPushButton("Open as A (float)")
        self.open_b = QPushButton("Open as B (quantized)")
        for b in (self.open_a, self.open_b):
            self.buttons.addButton(b, QDialogButtonBox.ButtonRole.ActionRole)
        self.open_a.clicked.connect(lambda: self.choose("A"))
        self.open_b.clicked.connect(lambda: self.choose("B"))
        self.buttons.rejected.connect(self.reject)
        self.note = QLabel()
        lay = QVBoxLayout(self)
        lay.addWidget(head)
        lay.addWidget(self.table, 1)
        lay.addWidget(self.note)
        lay.addWidget(self.buttons)
        self.table.itemSelectionChanged.connect(self._selection_changed)
        self.table.doubleClicked.connect(lambda _i: self.choose(self.slot))
        first = next((r for r, s in enumerate(bundle.sections) if s.is_tflite), None)
        if first is not None:
            self.table.selectRow(first)
        self._selection_changed()
        self.resize(760, 360)

    def showEvent(self, e) -> None:  # noqa: N802 - Qt API
        super().showEvent(e)
        wanted, other = (self.open_a, self.open_b) if self.slot == "A" else (self.open_b, self.open_a)
        other.setDefault(False)
        wanted.setDefault(True)  # Enter opens in the slot the user asked for

    def selected_section(self) -> Section | None:
        rows = self.table.selectionModel().selectedRows()
        return self.bundle.sections[rows[0].row()] if rows else None

    def select_section(self, index: int) -> None:
        self.table.selectRow(index)

    def _selection_changed(self) -> None:
        s = self.selected_section()
        ok = s is not None and s.is_tflite
        for b in (self.open_a, self.open_b):
            b.setEnabled(ok)
        if not any(x.is_tflite for x in self.bundle.sections):
            self.note.setText("This bundle holds no TFLite model.")
        elif s is not None and not s.is_tflite:
            self.note.setText(f"Section {s.index} is a {kind_text(s)} ({s.kind}), not a TFLite model: it cannot be opened as a model.")
        else:
            self.note.setText(f"Opens as {Path(self.bundle.path).name}#{s.index}" if s is not None else "")

    def choose(self, slot: str) -> None:
        s = self.selected_section()
        if s is None or not s.is_tflite:
            return
        self.section_chosen.emit(slot, section_address(self.bundle, s.index))
        self.accept()
