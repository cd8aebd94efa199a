"""The one place that holds application state: model A (float), model B (quantized), their
pairing, and the linked selection. Views send intents (open, select, pick a channel) and
listen to signals; they never compute numbers themselves.

Extension points for later features (layer error plot, activation histograms, op math...):
listen to `models_changed` and `selection_changed`; run long work through `run_task()` so it
shows in the status bar with progress and Cancel.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.errors import InspectorError
from inspector.core.model import Model, Subgraph, Tensor
from inspector.core.pairing import Pairing, pair_models
from inspector.core.weights import MAX_ELEMENTS, WeightAnalysis, analyze_tensors, weight_tensor_of
from inspector.gui.workers import Worker

SLOTS = ("A", "B")
SYNC_WEIGHT_ELEMENTS = 1_000_000  # smaller weight tensors are analysed at once, larger in a worker


@dataclass(frozen=True)
class Selection:
    """What is selected, as indices in each model's main subgraph (None: nothing there)."""

    origin: str = "A"  # the pane the user clicked in
    op_a: int | None = None
    op_b: int | None = None
    tensor_a: int | None = None
    tensor_b: int | None = None

    def op(self, slot: str) -> int | None:
        return self.op_a if slot == "A" else self.op_b

    def tensor(self, slot: str) -> int | None:
        return self.tensor_a if slot == "A" else self.tensor_b


class Controller(QObject):
    loading = Signal(str, str)  # slot, path
    model_changed = Signal(str)  # slot (model may now be None)
    models_changed = Signal()  # after any model_changed, once pairing is up to date
    load_failed = Signal(str, str, str)  # slot, path, message naming the file and the problem
    selection_changed = Signal(object)  # Selection
    weights_changed = Signal(object)  # WeightAnalysis | None
    quantization_changed = Signal(object)  # (label, Tensor) of the selected quantized tensor | None
    task_started = Signal(object, str)  # Worker, description
    error = Signal(str)  # any other user-facing error

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.models: dict[str, Model | None] = {"A": None, "B": None}
        self.pairing: Pairing | None = None
        self.pairing_note = ""
        self.selection = Selection()
        self.weights: WeightAnalysis | None = None
        self.channel: int | None = None
        self._load_token = {"A": 0, "B": 0}
        self._weights_worker: Worker | None = None

    # ------------------------------------------------------------------ models
    def subgraph(self, slot: str) -> Subgraph | None:
        m = self.models[slot]
        return m.main if m is not None else None

    def open_model(self, slot: str, path: str | Path, background: bool = True) -> Worker:
        """Load a .tflite into slot A or B; the other model stays as it is, also on failure."""
        if slot not in SLOTS:
            raise ValueError(f"slot must be A or B, not {slot!r}")
        path = str(path)
        self._load_token[slot] += 1
        token = self._load_token[slot]
        w = Worker(Model, path)
        w.finished.connect(lambda m: self._loaded(slot, token, m))
        w.failed.connect(lambda msg: self._load_failed(slot, token, path, msg))
        self.loading.emit(slot, path)
        if background:
            self.task_started.emit(w, f"Opening {Path(path).name}")
            w.start()
        else:
            w.run_here()
        return w

    def close_model(self, slot: str) -> None:
        self._load_token[slot] += 1
        self._set_model(slot, None)

    def _loaded(self, slot: str, token: int, model: Model) -> None:
        if token == self._load_token[slot]:  # a newer open of this slot wins
            self._set_model(slot, model)

    def _load_failed(self, slot: str, token: int, path: str, msg: str) -> None:
        if token == self._load_token[slot]:
            self.load_failed.emit(slot, path, msg)

    def _set_model(self, slot: str, model: Model | None) -> None:
        self.models[slot] = model
        self.pairing, self.pairing_note = None, ""
        a, b = self.models["A"], self.models["B"]
        if a is not None and b is not None:
            try:
                self.pairing = pair_models(a, b)
            except (InspectorError, IndexError, ValueError) as e:  # fall back to names
                self.pairing_note = f"structural pairing failed ({e}); matching by name"
        self.selection = Selection(origin=slot)
        self.model_changed.emit(slot)
        self.models_changed.emit()
        self.selection_changed.emit(self.selection)
        self._update_weights()

    # ------------------------------------------------------------------ counterparts
    def counterpart_tensor(self, slot: str, index: int) -> int | None:
        """The matching tensor in the other model: pairing first, then the same name."""
        other = "B" if slot == "A" else "A"
        sg, osg = self.subgraph(slot), self.subgraph(other)
        if sg is None or osg is None or not 0 <= index < len(sg.tensors):
            return None
        if self.pairing is not None:
            hit = self.pairing.quant_for_float(index) if slot == "A" else self.pairing.float_for_quant(index)
            if hit is not None:
                return hit
        t = osg.tensor_by_name(sg.tensors[index].name)
        return t.index if t is not None else None

    def counterpart_op(self, slot: str, index: int) -> int | None:
        other = "B" if slot == "A" else "A"
        sg, osg = self.subgraph(slot), self.subgraph(other)
        if sg is None or osg is None or not 0 <= index < len(sg.ops):
            return None
        if self.pairing is not None:
            hit = self.pairing.quant_op_for(index) if slot == "A" else self.pairing.float_op_for(index)
            if hit is not None:
                return hit
        names = {sg.tensors[o].name for o in sg.ops[index].outputs if o >= 0}
        for op in osg.ops:  # fallback: an op writing a tensor of the same name
            if any(o >= 0 and osg.tensors[o].name in names for o in op.outputs):
                return op.index
        return None

    # ------------------------------------------------------------------ selection intents
    def select_op(self, slot: str, index: int, tensor: int | None = None) -> None:
        """Select a layer; its weight tensor (else its first output) becomes the selected tensor,
        unless `tensor` names one (e.g. the tensor of an audit finding)."""
        sg = self.subgraph(slot)
        if sg is None or not 0 <= index < len(sg.ops):
            return
        if tensor is not None and 0 <= tensor < len(sg.tensors):
            self._select(slot, index, self.counterpart_op(slot, index), tensor, self.counterpart_tensor(slot, tensor))
            return
        op = sg.ops[index]
        t = weight_tensor_of(sg, op)
        if t is None:
            t = next((o for o in op.outputs if o >= 0), None)
        other_op = self.counterpart_op(slot, index)
        other_t = None
        if other_op is not None:
            osg = self.subgraph("B" if slot == "A" else "A")
            other_t = weight_tensor_of(osg, osg.ops[other_op])  # type: ignore[union-attr]
        if other_t is None and t is not None:
            other_t = self.counterpart_tensor(slot, t)
        self._select(slot, index, other_op, t, other_t)

    def select_tensor(self, slot: str, index: int) -> None:
        sg = self.subgraph(slot)
        if sg is None or not 0 <= index < len(sg.tensors):
            return
        self._select(slot, None, None, index, self.counterpart_tensor(slot, index))

    def clear_selection(self) -> None:
        self.channel = None
        self.selection = Selection()
        self.selection_changed.emit(self.selection)
        self._update_weights()

    def _select(self, slot, op, other_op, tensor, other_tensor) -> None:
        if slot == "A":
            sel = Selection("A", op, other_op, tensor, other_tensor)
        else:
            sel = Selection("B", other_op, op, other_tensor, tensor)
        if sel == self.selection:
            return
        if (sel.tensor_a, sel.tensor_b) != (self.selection.tensor_a, self.selection.tensor_b):
            self.channel = None
        self.selection = sel
        self.selection_changed.emit(sel)
        self._update_weights()

    def set_channel(self, channel: int | None) -> None:
        """Show one channel of a per-channel weight tensor (None: all channels)."""
        if channel != self.channel:
            self.channel = channel
            self._update_weights()

    # ------------------------------------------------------------------ derived views
    def selected_tensor(self, slot: str) -> Tensor | None:
        sg, i = self.subgraph(slot), self.selection.tensor(slot)
        return sg.tensors[i] if sg is not None and i is not None else None

    def _update_weights(self) -> None:
        ta, tb = self.selected_tensor("A"), self.selected_tensor("B")
        qt = next((t for t in (tb, ta) if t is not None and t.quantization is not None), None)
        label = "B" if qt is tb else "A"
        self.quantization_changed.emit((label, qt) if qt is not None else None)
        if self._weights_worker is not None:
            self._weights_worker.cancel()
            self._weights_worker = None
        ma, mb, ch = self.models["A"], self.models["B"], self.channel
        size = max((t.num_elements for t in (ta, tb) if t is not None), default=0)
        w = Worker(analyze_tensors, ma, ta, mb, tb, channel=ch, max_elements=MAX_ELEMENTS)
        self._weights_worker = w
        w.finished.connect(lambda r: self._weights_ready(w, r))
        w.failed.connect(self.error.emit)
        if size <= SYNC_WEIGHT_ELEMENTS:
            w.run_here()
        else:
            self.task_started.emit(w, f"Weight histogram of {(tb or ta).name}")  # type: ignore[union-attr]
            w.start()

    def _weights_ready(self, worker: Worker, analysis: WeightAnalysis | None) -> None:
        if worker is not self._weights_worker:  # superseded by a newer selection
            return
        self._weights_worker = None
        self.weights = analysis
        self.weights_changed.emit(analysis)

    def run_task(self, worker: Worker, description: str) -> Worker:
        """Start long work with the status bar's progress and Cancel (for later features)."""
        self.task_started.emit(worker, description)
        return worker.start()
