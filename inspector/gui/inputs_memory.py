"""The samples chosen for a model pair, remembered in QSettings (keyed by the two resolved paths)
and restored when that pair is opened again. A pair never seen before keeps the current choice,
except the bundled example pair, which starts with its bundled inputs (labels included, so task
metrics and per-class drop show on the first run)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

from PySide6.QtCore import QObject, QSettings

from inspector.core.samples.settings import ALL, SampleSettings
from inspector.core.state.app_state import AppState, same_file
from inspector.paths import example_inputs, example_pair

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


def is_example_pair(float_path: str, quant_path: str) -> bool:
    f, q = example_pair()
    return same_file(float_path, str(f)) and same_file(quant_path, str(q))


def example_samples() -> SampleSettings:
    return SampleSettings(count=ALL, source=str(example_inputs()))


class InputsMemory(QObject):
    def __init__(self, settings: QSettings, state: AppState, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.settings = settings
        self.state = state
        self._pair: tuple[str, str] | None = None
        self._restoring = False
        state.options_changed.connect(lambda _o: self.remember())

    def remembered(self, float_path: str, quant_path: str) -> SampleSettings | None:
        raw = self.settings.value(pair_key(float_path, quant_path))
        if not raw:
            return None
        try:
            return SampleSettings.from_json(json.loads(str(raw))["samples"])
        except (ValueError, KeyError, TypeError):
            return None  # a damaged entry is forgotten, not fatal

    def remember(self) -> None:
        """Store the state's samples for the open pair (after the user or a session changed them)."""
        p = self.state.paths()
        if p is None or self._restoring or self._pair != p:
            return
        entry = {"float": _resolved(p[0]), "quant": _resolved(p[1]), "samples": self.state.samples.to_json()}
        self.settings.setValue(pair_key(*p), json.dumps(entry))

    def pair_changed(self) -> None:
        """A new pair is open: restore its samples (or the example's inputs on its first run)."""
        p = self.state.paths()
        if p == self._pair:
            return
        self._pair = p
        if p is None:
            return
        samples = self.remembered(*p)
        if samples is not None and samples.source is not None and not Path(samples.source).exists():
            samples = None  # the remembered file is gone: keep the current choice
        if samples is None and is_example_pair(*p) and example_inputs().exists():
            samples = example_samples()
        if samples is None:
            return
        self._restoring = True
        try:
            self.state.set_options(dataclasses.replace(self.state.options, samples=samples))
        finally:
            self._restoring = False
