"""The models-and-selection controller: opens models into the Qt-free `AppState` (model A
float, model B quantized, their pairing, the linked selection) and turns its events into Qt
signals. Views send intents (open, select, pick a channel) and listen to signals; they never
compute numbers themselves.

Every feature is built with this controller: it listens to `pair_changed`,
`selection_changed` and `signature_changed`, and runs long work through `run_task()` so it
shows in the status bar with progress and Cancel.
"""

from __future__ import annotations

import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.compare.pairing import Pairing, warm_pairing
from inspector.core.compare.weights import (
    MAX_ELEMENTS,
    WeightAnalysis,
    analyze_tensors,
    layer_weights,
)
from inspector.core.errors import InspectorError
from inspector.core.graph.style import op_badges
from inspector.core.state.app_state import SLOTS, AppState, Selection
from inspector.core.tflite.layer_names import layer_short_name
from inspector.core.tflite.model import Model, Subgraph, Tensor
from inspector.core.viewdata.activations import activation_elements
from inspector.gui.relay import on_event, relay
from inspector.gui.workers import Worker, guarded

__all__ = ["SLOTS", "Controller", "Selection"]
SYNC_WEIGHT_ELEMENTS = 1_000_000  # smaller weight tensors are analysed at once, larger in a worker


class Controller(QObject):
    # relayed from AppState (`relay`): never emitted by hand
    slot_changed = Signal(str)  # slot (model may now be None): AppState.slot_changed
    pair_changed = Signal()  # once the pair and its pairing are up to date: AppState.pair_changed
    selection_changed = Signal(object)  # Selection (or its channel): AppState.selection_changed
    signature_changed = Signal(object)  # key | None, after both slot_changed: AppState.signature_changed
    # this controller's own
    loading = Signal(str, str)  # slot, path
    load_failed = Signal(str, str, str)  # slot, path, message naming the file and the problem
    weights_changed = Signal(object)  # WeightAnalysis | None
    quantization_changed = Signal(object)  # (label, Tensor) of the selected quantized tensor | None
    task_started = Signal(object, str)  # Worker, description
    error = Signal(str)  # any other user-facing error

    def __init__(self, parent: QObject | None = None, state: AppState | None = None) -> None:
        super().__init__(parent)
        self.state = state if state is not None else AppState()
        self.weights: WeightAnalysis | None = None
        self._load_token = {"A": 0, "B": 0}
        self._loading: dict[str, int | None] = {"A": None, "B": None}  # the token of the open under way
        self._weights_worker: Worker | None = None
        st = self.state
        relay(st.slot_changed, self.slot_changed, self)
        relay(st.pair_changed, self.pair_changed, self)
        relay(st.signature_changed, self.signature_changed, self)
        relay(st.selection_changed, self.selection_changed, self)
        on_event(st.selection_changed, self, lambda _s: self._update_weights())  # after every model move too

    # ------------------------------------------------------------------ state (held by AppState)
    @property
    def models(self) -> dict[str, Model | None]:
        return self.state.models

    @property
    def pairing(self) -> Pairing | None:
        return self.state.pairing

    @property
    def pairing_note(self) -> str:
        return self.state.pairing_note

    @property
    def selection(self) -> Selection:
        return self.state.selection

    @property
    def channel(self) -> int | None:
        return self.state.channel

    # ------------------------------------------------------------------ models
    def subgraph(self, slot: str) -> Subgraph | None:
        m = self.models[slot]
        return m.main if m is not None else None

    def open_model(self, slot: str, path: str | Path, background: bool = True) -> Worker:
        """Load a .tflite into slot A or B; the other model stays as it is, also on failure."""
        if slot not in SLOTS:
            raise ValueError(f"slot must be A or B, not {slot!r}")
        path = os.path.abspath(path)  # versions, sessions and recent files must not depend on the working directory
        self._load_token[slot] += 1
        token = self._load_token[slot]
        self._loading[slot] = token
        w = Worker(_load, path, slot, self.models["B" if slot == "A" else "A"])
        w.finished.connect(guarded(self, lambda m: self._loaded(slot, token, m)))
        w.failed.connect(guarded(self, lambda msg: self._load_failed(slot, token, path, msg)))
        self.loading.emit(slot, path)
        if background:
            self.task_started.emit(w, f"Opening {Path(path).name}")
            w.start()
        else:
            w.run_here()
        return w

    def open_pair(self, path_a: str | Path, path_b: str | Path, background: bool = True) -> Worker:
        """Load A and B together and open them as one pair (`AppState.set_models`): opened one by
        one, the new A met the old B first (a mismatched pair, its pair check and banner, its
        versions shelved). A file that fails is reported as `open_model` does; the other opens alone."""
        paths = {"A": os.path.abspath(path_a), "B": os.path.abspath(path_b)}
        tokens = {}
        for slot in SLOTS:
            self._load_token[slot] += 1
            tokens[slot] = self._loading[slot] = self._load_token[slot]
        w = Worker(_load_pair, paths["A"], paths["B"])
        w.finished.connect(guarded(self, lambda loaded: self._pair_loaded(tokens, paths, loaded)))
        w.failed.connect(guarded(self, lambda msg: self._pair_failed(tokens, paths, msg)))
        for slot in SLOTS:
            self.loading.emit(slot, paths[slot])
        if background:
            self.task_started.emit(w, f"Opening {Path(paths['A']).name} and {Path(paths['B']).name}")
            w.start()
        else:
            w.run_here()
        return w

    def _pair_loaded(self, tokens: dict[str, int], paths: dict[str, str], loaded: dict[str, Model | str]) -> None:
        current = [s for s in SLOTS if tokens[s] == self._load_token[s]]  # a newer open of a slot wins
        for s in current:
            self._loading[s] = None
        models = {s: m for s, m in loaded.items() if s in current and isinstance(m, Model)}
        if len(models) == 2:
            self.state.set_models(models["A"], models["B"])
        else:
            for s, m in models.items():
                self._set_model(s, m)
        for s in current:
            if isinstance(loaded[s], str):
                self.load_failed.emit(s, paths[s], loaded[s])

    def _pair_failed(self, tokens: dict[str, int], paths: dict[str, str], msg: str) -> None:
        for s in SLOTS:
            self._load_failed(s, tokens[s], paths[s], msg)

    def is_loading(self, slot: str) -> bool:
        """Whether a model is being opened into `slot` (its worker has not answered yet)."""
        return self._loading[slot] is not None

    def close_model(self, slot: str) -> None:
        self._load_token[slot] += 1
        self._loading[slot] = None
        self._set_model(slot, None)

    def swap_models(self) -> None:
        """Exchange A and B (the pair check found the quantized model in slot A)."""
        self.state.swap_models()

    def _loaded(self, slot: str, token: int, model: Model) -> None:
        if token == self._load_token[slot]:  # a newer open of this slot wins
            self._loading[slot] = None
            self._set_model(slot, model)

    def _load_failed(self, slot: str, token: int, path: str, msg: str) -> None:
        if token == self._load_token[slot]:
            self._loading[slot] = None
            self.load_failed.emit(slot, path, msg)

    def _set_model(self, slot: str, model: Model | None) -> None:
        self.state.set_model(slot, model)

    def set_signature(self, key: str | None) -> None:
        """Compare signature `key` (None: subgraph 0): the panes, pairing and op tables follow."""
        self.state.set_signature(key)

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
        """The matching op in the other model: the core pairing's, both ways the same. An op it
        leaves unpaired (a DEQUANTIZE of a float16 constant, an op B added) has none; names are
        used only when there is no pairing at all (structural pairing failed), and only a match
        that holds both ways."""
        other = "B" if slot == "A" else "A"
        sg, osg = self.subgraph(slot), self.subgraph(other)
        if sg is None or osg is None or not 0 <= index < len(sg.ops):
            return None
        if self.pairing is not None:
            return self.pairing.quant_op_for(index) if slot == "A" else self.pairing.float_op_for(index)
        hit = _same_name_op(sg, osg, index)
        return hit if hit is not None and _same_name_op(osg, sg, hit) == index else None

    # ------------------------------------------------------------------ selection intents
    def select_op(self, slot: str, index: int, tensor: int | None = None) -> None:
        """Select a layer; its weights (`layer_weights`), else its first output (an activation: a
        RESHAPE's shape vector or a MUL's factor are not weights), becomes the selected tensor,
        unless `tensor` names one (e.g. the tensor of an audit finding)."""
        sg = self.subgraph(slot)
        if sg is None or not 0 <= index < len(sg.ops):
            return
        if tensor is not None and 0 <= tensor < len(sg.tensors):
            self._select(slot, index, self.counterpart_op(slot, index), tensor, self.counterpart_tensor(slot, tensor))
            return
        op = sg.ops[index]
        t = layer_weights(sg, op)
        if t is None:
            t = next((o for o in op.outputs if o >= 0), None)
        other_op = self.counterpart_op(slot, index)
        other_t = None
        osg = self.subgraph("B" if slot == "A" else "A")
        if other_op is not None and osg is not None:  # a counterpart op: the other model is open
            other_t = layer_weights(osg, osg.ops[other_op])
        if other_t is None and t is not None:
            other_t = self.counterpart_tensor(slot, t)
        self._select(slot, index, other_op, t, other_t)

    def select_tensor(self, slot: str, index: int) -> None:
        sg = self.subgraph(slot)
        if sg is None or not 0 <= index < len(sg.tensors):
            return
        self._select(slot, None, None, index, self.counterpart_tensor(slot, index))

    def clear_selection(self) -> None:
        self.state.select(Selection(), None)

    def _select(self, slot: str, op: int | None, other_op: int | None, tensor: int | None, other_tensor: int | None) -> None:
        if slot == "A":
            sel = Selection("A", op, other_op, tensor, other_tensor)
        else:
            sel = Selection("B", other_op, op, other_tensor, tensor)
        if sel == self.selection:
            return
        same_tensors = (sel.tensor_a, sel.tensor_b) == (self.selection.tensor_a, self.selection.tensor_b)
        self.state.select(sel, self.channel if same_tensors else None)

    def set_channel(self, channel: int | None) -> None:
        """Show one channel of a per-channel weight tensor (None: all channels)."""
        self.state.select(self.selection, channel)

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
        w.finished.connect(guarded(self, lambda r: self._weights_ready(w, r)))
        w.failed.connect(guarded(self, self.error.emit))
        if size <= SYNC_WEIGHT_ELEMENTS:
            w.run_here()
        else:
            shown = tb or ta  # one of them, since size > 0
            self.task_started.emit(w, f"Weight histogram of {shown.name if shown is not None else 'a tensor'}")
            w.start()

    def _weights_ready(self, worker: Worker, analysis: WeightAnalysis | None) -> None:
        if worker is not self._weights_worker:  # superseded by a newer selection
            return
        self._weights_worker = None
        self.weights = analysis
        self.weights_changed.emit(analysis)

    def run_task(self, worker: Worker, description: str) -> Worker:
        """Start long work with the status bar's progress and Cancel."""
        self.task_started.emit(worker, description)
        return worker.start()


def _load_pair(path_a: str, path_b: str) -> dict[str, Model | str]:
    """Worker side of `open_pair`: each slot's model, or the message naming its file and problem."""
    out: dict[str, Model | str] = {}
    for slot, path in zip(SLOTS, (path_a, path_b), strict=True):
        try:
            out[slot] = Model(path)
        except InspectorError as e:
            out[slot] = str(e)
    return out


def _same_name_op(sg: Subgraph, osg: Subgraph, index: int) -> int | None:
    """The first op of `osg` writing a tensor named like an output of op `index` of `sg`."""
    names = {sg.tensors[o].name for o in sg.ops[index].outputs if o >= 0}
    for op in osg.ops:
        if any(o >= 0 and osg.tensors[o].name in names for o in op.outputs):
            return op.index
    return None


def _load(path: str, slot: str, other: Model | None) -> Model:
    """Worker-thread side of opening a model: read it, and pair it with the other slot's model
    (kept by `pairing.paired_models`), name its layers and count its activations, so none of it
    runs over 1,500 ops on the GUI thread when it arrives, when a plan names its layers or when
    the graph badges its ops, or when the plan editor checks which of its ops can be equalized."""
    model = Model(path)
    if slot == "A":
        warm_pairing(model, other)
    else:
        warm_pairing(other, model)
    layer_short_name(model, 0)  # the layers' distinct names (plan rows, versions), made here once
    activation_elements(model)  # what a comparison keeps (`keep_plan`), counted here once
    op_badges(model)  # the graph's "float"/"fixed" badges of its ops, made here once (`graph.style`)
    model.main.readers(-1)  # its map of each tensor's readers (the plan editor's checks: 13 ms for 1,500 ops)
    return model
