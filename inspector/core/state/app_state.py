"""The application state, Qt-free (in the spirit of napari's ViewerModel and glue's state objects).

One `AppState` holds what a session saves: models A (float) and B (quantized) with their
pairing, the linked selection (op and tensor indices in each model's main subgraph, B's op
index being the layer identifier), the comparison options (with their `SampleSettings` and the
chosen signature: `models` are the opened files seen through it, `base_models` as opened), the
current comparison and its baseline, the runtime parity of B, and the versions of B made by
requantizing; beside it, unsaved, the requantize workflow (`requantize`: the plan draft,
Suggest's result, the awaited run; `requantize_flow`). Changes go through its methods, which
emit plain `Event`s; GUI controllers take the state in their constructor and views subscribe to
the events. `core.state.session` serializes it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inspector.core.compare.options import CompareOptions
from inspector.core.compare.pairing import Pairing, paired_models
from inspector.core.compare.parity_result import RuntimeParityResult
from inspector.core.compare.result import ComparisonResult
from inspector.core.errors import InspectorError
from inspector.core.events import Event
from inspector.core.samples.settings import SampleSettings
from inspector.core.state.requantize_flow import RequantizeFlow
from inspector.core.state.versions import Version, opened_version
from inspector.core.tflite.model import Model
from inspector.core.tflite.signatures import SignatureInfo, list_signatures

SLOTS = ("A", "B")
SAMPLE_OPTIONS = frozenset(f.name for f in dataclasses.fields(SampleSettings))  # options kept in `options.samples`
OPTION_NAMES = SAMPLE_OPTIONS | {f.name for f in dataclasses.fields(CompareOptions)} - {"samples"}


def same_file(a: str | None, b: str | None) -> bool:
    """True when both paths name the same file (resolved); False when either is missing."""
    if not a or not b:
        return False
    if a == b:
        return True  # (resolving both took 0.6 ms, 20 times per result arriving)
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


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


class AppState:
    """Models, pairing, selection, sample settings, comparisons and versions of B, with events."""

    def __init__(self) -> None:
        self.models: dict[str, Model | None] = {"A": None, "B": None}  # seen through the signature
        self.base_models: dict[str, Model | None] = {"A": None, "B": None}  # as opened
        self.signature_note = ""  # why a chosen signature was dropped, if it was
        self.pairing: Pairing | None = None
        self.pairing_note = ""
        self.selection = Selection()
        self.channel: int | None = None
        self.options = CompareOptions()  # what the next comparison runs (samples included)
        self.comparison: ComparisonResult | None = None  # the current result
        self.run_options: CompareOptions | None = None  # the options it ran with
        self.baseline: ComparisonResult | None = None  # a second series (e.g. before requantizing)
        self.baseline_label = ""
        self.versions: list[Version] = []  # the versions of B (v0: the opened model B)
        self.requantize = RequantizeFlow()  # the plan draft, Suggest's result, the awaited run (not saved)
        self.current: int | None = None  # the version that is model B now
        self.reference: int | None = None  # the version it is measured against (baseline, deltas)
        # versions made for other pairs, kept while another pair is open and offered again when
        # their pair is reopened (A, and model B one of them): (versions, current, reference)
        self.shelved: list[tuple[list[Version], int | None, int | None]] = []
        self.parity: RuntimeParityResult | None = None  # runtime parity of model B
        self.slot_changed = Event()  # (slot): that slot's model (or its view through the signature) changed
        self.pair_changed = Event()  # (): once per change of the open pair, after its slot_changed
        self.signature_changed = Event()  # (key | None): both models re-viewed, pairing and selection reset
        self.selection_changed = Event()  # (Selection)
        self.options_changed = Event()  # (CompareOptions)
        self.comparison_changed = Event()  # (ComparisonResult | None)
        self.baseline_changed = Event()  # (ComparisonResult | None)
        self.versions_changed = Event()  # (): the list, `current` or `reference` changed
        self.parity_changed = Event()  # (RuntimeParityResult | None)

    # ------------------------------------------------------------------ models
    def set_model(self, slot: str, model: Model | None) -> None:
        """Put `model` in slot A or B: seen through the chosen signature (dropped, with a note,
        when the open models do not both have it), pairing recomputed, selection cleared, a
        comparison of other files dropped (the baseline stays)."""
        if slot not in SLOTS:
            raise ValueError(f"slot must be A or B, not {slot!r}")
        self.base_models[slot] = model
        self._models_moved(slot)
        self.slot_changed.emit(slot)
        self.pair_changed.emit()
        self.selection_changed.emit(self.selection)

    def set_models(self, a: Model | None, b: Model | None) -> None:
        """Put a pair in both slots at once (a recent pair, two files dropped, the example): one
        pairing, one `pair_changed`, so no mismatched pair (the new A with the old B) is ever open
        on the way; `slot_changed` fires for both slots."""
        self.base_models["A"], self.base_models["B"] = a, b
        self._models_moved("A")
        for slot in SLOTS:
            self.slot_changed.emit(slot)
        self.pair_changed.emit()
        self.selection_changed.emit(self.selection)

    def swap_models(self) -> None:
        """Exchange models A and B (a pair opened the wrong way round): one pairing, selection
        cleared, a comparison of the old order dropped; `slot_changed` fires for both slots."""
        self.base_models["A"], self.base_models["B"] = self.base_models["B"], self.base_models["A"]
        self._models_moved("B")
        for slot in SLOTS:
            self.slot_changed.emit(slot)
        self.pair_changed.emit()
        self.selection_changed.emit(self.selection)

    def _models_moved(self, origin: str) -> None:
        """After a model changed slot: seen through the chosen signature (dropped, with a note,
        when the open models do not both have it), pairing recomputed, selection cleared, a
        stale comparison dropped."""
        key = self.options.signature
        dropped = key is not None and key not in self.signature_keys()
        if dropped:
            self.signature_note = f"signature '{key}' is not in every open model: comparing subgraph 0"
            self.options = dataclasses.replace(self.options, signature=None)
        before, old_models = self.selection, dict(self.models)
        self._view_models()
        self.selection, self.channel = Selection(origin=origin), None
        self._drop_stale_comparison()
        old_versions = list(self.versions)
        self._follow_versions()
        same_list = len(self.versions) == len(old_versions) > 1 and all(a is b for a, b in zip(self.versions, old_versions, strict=True))
        if origin == "B" and same_list and self.models["A"] is old_models["A"]:
            self.selection = _carried(before, old_models["B"], self.models["B"], self.pairing)  # another version of B: same layer
        if self.parity is not None and (self.models["B"] is None or not same_file(self.parity.model, self.models["B"].path)):
            self.set_parity(None)  # a result for another model B
        if dropped:
            self.options_changed.emit(self.options)
            self._signature_moved(None)

    def _pair(self) -> None:
        self.pairing, self.pairing_note = None, ""
        a, b = self.models["A"], self.models["B"]
        if a is not None and b is not None:
            try:
                self.pairing = paired_models(a, b)  # paired already by the thread that loaded the model
            except (InspectorError, IndexError, ValueError) as e:  # fall back to names
                self.pairing_note = f"structural pairing failed ({e}); matching by name"

    def _view_models(self) -> None:
        for s in SLOTS:
            self.models[s] = _through(self.base_models[s], self.options.signature)
        self._pair()

    def _drop_stale_comparison(self) -> None:
        """Drop a comparison of other files or of another signature (one model closed: dropped)."""
        r, p = self.comparison, self.paths()
        if r is None:
            return
        if p is None or not (same_file(r.float_path, p[0]) and same_file(r.quant_path, p[1])) or r.signature != self.options.signature:
            self.set_comparison(None)

    # ------------------------------------------------------------------ signatures
    def signature_choices(self) -> tuple[SignatureInfo, ...]:
        """The signatures a comparison can choose: those of B (else A) that every open model has."""
        open_models = [m for m in (self.base_models["B"], self.base_models["A"]) if m is not None]
        if not open_models:
            return ()
        keys = set.intersection(*({s.key for s in m.signatures} for m in open_models))
        return tuple(s for s in list_signatures(open_models[0]) if s.key in keys)

    def signature_keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.signature_choices())

    def set_signature(self, key: str | None) -> None:
        """Compare signature `key` (None: subgraph 0); see `set_options`."""
        self.set_options(dataclasses.replace(self.options, signature=key))

    def paths(self) -> tuple[str, str] | None:
        a, b = self.models["A"], self.models["B"]
        return None if a is None or b is None else (a.path, b.path)

    def pair_identity(self) -> tuple[str | None, str | None]:
        """The open pair as one identity: (A, v0) while model B is one of the versions of v0, so
        another version of B is the same pair and another file opened in A or B another pair."""
        if self.versions:
            return self.versions[0].float_path, self.versions[0].path
        a, b = self.base_models["A"], self.base_models["B"]
        return (a.path if a else None, b.path if b else None)

    def is_current(self, result: ComparisonResult) -> bool:
        """Whether `result` compares the open models (B must be open; A too when it is open)."""
        a, b = self.models["A"], self.models["B"]
        if b is None or not same_file(result.quant_path, b.path) or result.signature != self.options.signature:
            return False
        return a is None or same_file(result.float_path, a.path)

    # ------------------------------------------------------------------ selection
    def select(self, selection: Selection, channel: int | None = None) -> bool:
        """Set the selection; False when nothing changed."""
        if selection == self.selection and channel == self.channel:
            return False
        self.selection, self.channel = selection, channel
        self.selection_changed.emit(selection)  # a channel change too: the weight views follow it
        return True

    # ------------------------------------------------------------------ samples and results
    @property
    def samples(self) -> SampleSettings:
        return self.options.samples

    def set_options(self, options: CompareOptions) -> None:
        """New options. A new signature re-views both models (pairing recomputed, selection
        cleared, the comparison of the other signature dropped) and emits `signature_changed`;
        a key the open models do not both have falls back to subgraph 0 with `signature_note`."""
        if options == self.options:
            return
        key = options.signature
        changed = key != self.options.signature
        if changed and key is not None and self.paths_open() and key not in self.signature_keys():
            self.signature_note = f"signature '{key}' is not in the open models: comparing subgraph 0"
            options = dataclasses.replace(options, signature=None)
            changed = self.options.signature is not None
        elif changed:
            self.signature_note = ""
        self.options = options
        if changed:
            self._view_models()
            self.selection, self.channel = Selection(origin=self.selection.origin), None
            self._drop_stale_comparison()
            if self.parity is not None and self.parity.signature != options.signature:
                self.set_parity(None)  # a result for another subgraph's ops
        self.options_changed.emit(options)
        if changed:
            self._signature_moved(options.signature)
            self.selection_changed.emit(self.selection)

    def option(self, name: str) -> object:
        """One option by name: a `CompareOptions` field, or a `SampleSettings` one (count, seed,
        source, normalization)."""
        if name not in OPTION_NAMES:
            raise KeyError(f"no option {name!r}")
        return getattr(self.options.samples if name in SAMPLE_OPTIONS else self.options, name)

    def set_option(self, name: str, value: object) -> None:
        """The one setter of a single option (what a bound widget calls): that field changes, no
        other; `options_changed` fires once, and only when the value differs (no echo)."""
        if self.option(name) == value:
            return
        o, change = self.options, dict[str, Any]({name: value})  # the field's type is the dataclass's to check
        if name in SAMPLE_OPTIONS:
            self.set_options(dataclasses.replace(o, samples=dataclasses.replace(o.samples, **change)))
        else:
            self.set_options(dataclasses.replace(o, **change))

    def _signature_moved(self, key: str | None) -> None:
        """Both models are seen through another signature: each slot's view changed."""
        for slot in SLOTS:
            self.slot_changed.emit(slot)
        self.signature_changed.emit(key)

    def paths_open(self) -> bool:
        """Whether any model is open."""
        return any(m is not None for m in self.base_models.values())

    def set_comparison(self, result: ComparisonResult | None, run_options: CompareOptions | None = None) -> None:
        """The current result (None: none); a result of another signature is for other ops: the
        caller checks `is_current` before showing a stored one."""
        self.comparison = result
        self.run_options = run_options if result is not None else None
        self.comparison_changed.emit(result)

    def current_comparison(self) -> ComparisonResult | None:
        """The comparison if it describes the open pair, else None."""
        r = self.comparison
        return r if r is not None and self.is_current(r) else None

    def set_baseline(self, result: ComparisonResult | None, label: str = "baseline") -> None:
        self.baseline = result
        self.baseline_label = label if result is not None else ""
        self.baseline_changed.emit(result)

    def set_parity(self, result: RuntimeParityResult | None) -> None:
        """The runtime parity of model B (None: none)."""
        self.parity = result
        self.parity_changed.emit(result)

    # ------------------------------------------------------------------ versions of B
    def set_versions(self, versions: list[Version], current: int | None = None, reference: int | None = None) -> None:
        """A new list of versions (numbered in order), model B being `current`."""
        self.versions = list(versions)
        for i, v in enumerate(self.versions):
            v.number = i
        self.current = current if self.version(current) is not None else None
        self.reference = reference if self.version(reference) is not None and reference != self.current else None
        self.versions_changed.emit()

    def version(self, i: int | None) -> Version | None:
        return self.versions[i] if i is not None and 0 <= i < len(self.versions) else None

    def add_version(self, v: Version) -> int:
        """Append a version (not yet model B); returns its index."""
        v.number = len(self.versions)
        self.versions.append(v)
        self.versions_changed.emit()
        return v.number

    def set_current(self, i: int, reference: int | None | str = "default") -> None:
        """Version i becomes model B (the caller opens its file), measured against `reference`:
        by default the version it was made from (`default_reference`), never the one another
        version was measured against."""
        if self.version(i) is None:
            return
        ref = default_reference(self.versions, i) if reference == "default" else reference
        self.current = i
        self.reference = ref if isinstance(ref, int) and self.version(ref) is not None and ref != i else None
        self.versions_changed.emit()

    def set_version_comparison(self, i: int, result: ComparisonResult | None) -> None:
        """The comparison of version i (made when it was model B, or restored from a session)."""
        v = self.version(i)
        if v is not None and v.comparison is not result:
            v.comparison = result
            self.versions_changed.emit()

    def set_reference(self, i: int | None) -> None:
        self.reference = i if self.version(i) is not None and i != self.current else None
        self.versions_changed.emit()

    def _follow_versions(self) -> None:
        """Versions follow the open pair: model B one of them (same A) -> it is current; another
        pair -> its own v0, or the versions made for it earlier (shelved when another pair was
        opened: work made here is never dropped), and the baseline of the old pair goes; a model
        closed -> none (the versions shelved)."""
        a, b = self.base_models["A"], self.base_models["B"]
        if a is None or b is None:
            if self.versions or self.current is not None:
                self._shelve()
                self.versions, self.current, self.reference = [], None, None
                self.versions_changed.emit()
            if self.baseline is not None:
                self.set_baseline(None)
            return
        vs = self.versions
        hit = next((i for i, v in enumerate(vs) if same_file(v.path, b.path)), None)
        if hit is not None and same_file(vs[0].float_path, a.path):
            if hit != self.current:  # opened by hand, not through set_current
                self.current, self.reference = hit, default_reference(vs, hit)
                self.versions_changed.emit()
            return
        self._shelve()
        kept = self._unshelve(a.path, b.path)
        if kept is not None:
            self.versions, self.current, self.reference = kept
        else:
            self.versions, self.current, self.reference = [opened_version(a.path, b)], 0, None
        if self.baseline is not None:
            self.set_baseline(None)  # a series of the old pair, drawn on another model's ops
        self.versions_changed.emit()

    def _shelve(self) -> None:
        """Keep the open pair's versions when they hold work (more than v0)."""
        if len(self.versions) > 1:
            self.shelved = [e for e in self.shelved if not _same_pair(e[0], self.versions)]
            self.shelved.append((list(self.versions), self.current, self.reference))

    def _unshelve(self, float_path: str, quant_path: str) -> tuple[list[Version], int, int | None] | None:
        """The shelved versions of the pair (float_path, one of them), taken off the shelf, model
        B (`quant_path`) current."""
        for k, (vs, _cur, _ref) in enumerate(self.shelved):
            hit = next((i for i, v in enumerate(vs) if same_file(v.path, quant_path)), None)
            if hit is not None and same_file(vs[0].float_path, float_path):
                del self.shelved[k]
                return vs, hit, default_reference(vs, hit)
        return None


def _carried(sel: Selection, old_b: Model | None, new_b: Model | None, pairing: Pairing | None = None) -> Selection:
    """`sel` on another version of model B: B's op found again through A's (the new pairing), else
    by its output tensor's name; B's tensor the same input or output of the op found, else by name;
    A's stay. An edit that adds ops renumbers B (keep float: DEQUANTIZE, the op in float, QUANTIZE
    back to the old tensor's name, so the name alone would select that QUANTIZE)."""
    if old_b is None or new_b is None:
        return Selection(origin=sel.origin)
    old, new = old_b.main, new_b.main
    by_name = {t.name: i for i, t in enumerate(new.tensors)}
    tensor = by_name.get(old.tensors[sel.tensor_b].name) if sel.tensor_b is not None and sel.tensor_b < len(old.tensors) else None
    old_op = old.ops[sel.op_b] if sel.op_b is not None and sel.op_b < len(old.ops) else None
    if old_op is None:
        return Selection(sel.origin, sel.op_a, None, sel.tensor_a, tensor)
    op = pairing.quant_op_for(sel.op_a) if pairing is not None and sel.op_a is not None else None
    if op is None or not 0 <= op < len(new.ops) or new.ops[op].type != old_op.type:
        outs = [old.tensors[o].name for o in old_op.outputs if o >= 0]
        t = by_name.get(outs[0]) if outs else None
        op = next((o.index for o in new.ops if t is not None and t in o.outputs), None)
    if op is not None and sel.tensor_b is not None and new.ops[op].type == old_op.type:
        for old_list, new_list in ((old_op.inputs, new.ops[op].inputs), (old_op.outputs, new.ops[op].outputs)):
            if sel.tensor_b in old_list and len(new_list) == len(old_list):
                tensor = new_list[list(old_list).index(sel.tensor_b)]
                break
    return Selection(sel.origin, sel.op_a, op, sel.tensor_a, tensor if tensor is None or tensor >= 0 else None)


def _same_pair(a: list[Version], b: list[Version]) -> bool:
    return bool(a and b) and same_file(a[0].path, b[0].path) and same_file(a[0].float_path, b[0].float_path)


def default_reference(versions: list[Version], i: int) -> int | None:
    """What version i is measured against when it becomes model B: the version it was made from
    (for the quantizer route, the no-change re-calibration made with it); None for v0 or a
    version whose origin is not in the list."""
    if not 0 <= i < len(versions):
        return None
    v = versions[i]
    if v.kind == "requantized" and i > 0:
        prev = versions[i - 1]
        if prev.kind == "recalibrated" and prev.source == v.source:
            return i - 1
    if not v.source:
        return None
    return next((k for k, w in enumerate(versions) if k != i and same_file(w.path, v.source)), None)


def _through(model: Model | None, key: str | None) -> Model | None:
    """`model` seen through signature `key` (None, or a key it lacks: subgraph 0)."""
    if model is None:
        return None
    if key is not None and any(s.key == key for s in model.signatures):
        return model.for_signature(key)
    return model
