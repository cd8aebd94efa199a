"""The samples chosen for a model pair, remembered in QSettings (keyed by the two resolved paths)
and restored when that pair is opened again. A pair never seen before starts from its own
default (random samples; the bundled example pair: its bundled inputs, labels included, so task
metrics and per-class drop show on the first run) and says so: the previous pair's file would
not fit another model's inputs. The versions of model B made by requantizing are the same pair
as the model B they came from (keyed by v0), so switching versions keeps the samples. A pair
opened again says which samples it uses (and how many its last comparison ran on): opening it
through File › Open recent passes by a mixed pair whose "no samples chosen" note stayed shown."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from PySide6.QtCore import QObject, QSettings, Signal

from inspector.core.samples.settings import ALL, SampleSettings
from inspector.core.state.app_state import AppState, same_file
from inspector.gui.relay import on_event
from inspector.paths import example_inputs, is_example_pair

GROUP = "pair_inputs"


def _resolved(path: str) -> str:
    try:
        return str(Path(path).resolve())
    except OSError:
        return path


def pair_key(float_path: str, quant_path: str) -> str:
    """The settings key of a pair: a hash of both resolved paths (in order)."""
    text = f"{_resolved(float_path)}\n{_resolved(quant_path)}"
    return f"{GROUP}/{hashlib.sha256(text.encode()).hexdigest()[:20]}"


def example_samples() -> SampleSettings:
    return SampleSettings(count=ALL, source=str(example_inputs()))


class InputsMemory(QObject):
    note = Signal(str)  # what a newly opened pair starts from, when it is not its remembered choice

    def __init__(self, settings: QSettings, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.state = state
        self._pair: tuple[str, str] | None = None
        self._owner: tuple[str, str] | None = None  # the pair the current samples were chosen for (None: no pair open then)
        self._restoring = False
        on_event(state.options_changed, self, lambda _o: self.remember())

    def _entry(self, float_path: str, quant_path: str) -> dict | None:
        raw = self.settings.value(pair_key(float_path, quant_path))
        if not raw:
            return None
        try:
            entry = json.loads(str(raw))
        except (ValueError, TypeError):
            return None
        return entry if isinstance(entry, dict) else None

    def remembered(self, float_path: str, quant_path: str) -> SampleSettings | None:
        entry = self._entry(float_path, quant_path)
        try:
            return None if entry is None else SampleSettings.from_json(entry["samples"])
        except (ValueError, KeyError, TypeError, AttributeError):
            return None  # a damaged entry is forgotten, not fatal

    def last_run_count(self, float_path: str, quant_path: str) -> int | None:
        """How many samples the pair's last comparison ran on, if it ran on its remembered choice."""
        entry = self._entry(float_path, quant_path) or {}
        ran = entry.get("ran")
        if not isinstance(ran, dict) or ran.get("samples") != entry.get("samples"):
            return None
        count = ran.get("count")
        return count if isinstance(count, int) and count > 0 else None

    def ran(self, sample_count: int) -> None:
        """A comparison of the open pair ran on `sample_count` samples of its current choice."""
        p = self.pair()
        if p is None or self._pair != p:
            return
        samples = self.state.samples.to_json()
        entry = {"float": _resolved(p[0]), "quant": _resolved(p[1]), "samples": samples,
                 "ran": {"samples": samples, "count": int(sample_count)}}
        self.settings.setValue(pair_key(*p), json.dumps(entry))

    def describe(self, samples: SampleSettings, p: tuple[str, str]) -> str:
        """The remembered choice in words, with the count its last comparison used."""
        n = self.last_run_count(*p)
        if n is None or samples.source is None:
            return samples.describe()
        return f"{n} samples of {Path(samples.source).name}"

    def pair(self) -> tuple[str, str] | None:
        """The open pair as remembered: (A, v0) when model B is a version made from v0."""
        p, vs = self.state.paths(), self.state.versions
        if p is not None and vs and same_file(vs[0].float_path, p[0]) and any(same_file(v.path, p[1]) for v in vs):
            return p[0], vs[0].path
        return p

    def remember(self) -> None:
        """Store the state's samples for the open pair (after the user or a session changed them)."""
        p = self.pair()
        if self._restoring:
            return
        self._owner = p  # chosen with no pair open: they are for the next pair
        if p is None or self._pair != p:
            return
        entry = {"float": _resolved(p[0]), "quant": _resolved(p[1]), "samples": self.state.samples.to_json()}
        self.settings.setValue(pair_key(*p), json.dumps(entry))

    def pair_changed(self) -> None:
        """A new pair is open: restore its samples, else start from its own default and say so."""
        p = self.pair()
        if p == self._pair:
            return
        self._pair = p
        if p is None:
            return
        samples = self.remembered(*p)
        note = ""
        if samples is not None and samples.source is not None and not Path(samples.source).exists():
            note = f"The samples remembered for this pair ({samples.source}) no longer exist: "
            samples = None
        if samples is None and is_example_pair(*p) and example_inputs().exists():
            samples = example_samples()
            note += "the example pair starts with its bundled inputs."
        elif samples is None and self._owner is None:  # chosen before any pair was open: for this one
            self._owner = p
            self.remember()
            return
        elif samples is None:
            samples = SampleSettings()
            note = (note or "No samples chosen for this pair yet: ") + f"starting from its default, {samples.describe()}."
        else:
            note = f"This pair's inputs, as chosen before: {self.describe(samples, p)}."
        self._owner = p
        if note:
            self.note.emit(note[:1].upper() + note[1:])
        if samples == self.state.samples:
            return
        self._restoring = True
        try:
            self.state.set_options(dataclasses.replace(self.state.options, samples=samples))
        finally:
            self._restoring = False
