"""Recent files and last folder, kept in QSettings (tests pass their own QSettings)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

MAX_RECENT = 10


def _as_list(v) -> list[str]:
    if v is None or v == "":
        return []
    return [str(x) for x in v] if isinstance(v, list | tuple) else [str(v)]


class RecentFiles:
    def __init__(self, settings: QSettings) -> None:
        self.settings = settings

    def entries(self) -> list[tuple[str, str]]:
        """(slot, path) pairs, most recent first."""
        out = []
        for e in _as_list(self.settings.value("recent_files")):
            slot, _, path = e.partition("\t")
            if slot in ("A", "B") and path:
                out.append((slot, path))
        return out

    def add(self, slot: str, path: str) -> None:
        path = str(Path(path).resolve())
        items = [(s, p) for s, p in self.entries() if (s, p) != (slot, path)]
        items.insert(0, (slot, path))
        self.settings.setValue("recent_files", [f"{s}\t{p}" for s, p in items[:MAX_RECENT]])
        self.settings.setValue("last_dir", str(Path(path).parent))

    def clear(self) -> None:
        self.settings.remove("recent_files")

    @property
    def last_dir(self) -> str:
        return str(self.settings.value("last_dir", "") or "")
