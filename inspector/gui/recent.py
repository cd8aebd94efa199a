"""Recent files and last folders, kept in QSettings (tests pass their own QSettings).

`last_dir` is where the last model was opened from (the open dialog starts there). Save and
export dialogs start in `save_dir`: the folder the user last saved into, else the last model
folder, else home; never inside the app's own resources (the bundled example lives there, and an
installed app's folder is no place for the user's files).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from inspector.paths import in_app_cache, in_versions_cache, resources_dir

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
        """Remember `path` (not a file of the app's own caches: a requantized version, a Keras
        model's float twin; the Keras feature remembers the Keras model itself)."""
        if in_app_cache(path):
            return
        path = str(Path(path).resolve())
        items = [(s, p) for s, p in self.entries() if (s, p) != (slot, path)]
        items.insert(0, (slot, path))
        self.settings.setValue("recent_files", [f"{s}\t{p}" for s, p in items[:MAX_RECENT]])
        self.settings.setValue("last_dir", str(Path(path).parent))

    def pairs(self) -> list[tuple[str, str]]:
        """(A, B) pairs opened together, most recent first: reopening one opens both at once
        (single files reopened one by one passed through a mismatched pair and its banner)."""
        out = []
        for e in _as_list(self.settings.value("recent_pairs")):
            a, _, b = e.partition("\t")
            if a and b:
                out.append((a, b))
        return out

    def add_pair(self, a: str, b: str) -> None:
        """Remember the open pair (not when either is a file of the app's caches)."""
        if in_app_cache(a) or in_app_cache(b):
            return
        pair = (str(Path(a).resolve()), str(Path(b).resolve()))
        items = [p for p in self.pairs() if p != pair]
        items.insert(0, pair)
        self.settings.setValue("recent_pairs", [f"{x}\t{y}" for x, y in items[:MAX_RECENT]])

    def clear(self) -> None:
        self.settings.remove("recent_files")
        self.settings.remove("recent_pairs")

    @property
    def last_dir(self) -> str:
        return str(self.settings.value("last_dir", "") or "")

    @property
    def save_dir(self) -> str:
        """Where save / export / session dialogs start (see the module docstring)."""
        return self.save_dir_for()

    def save_dir_for(self, model: str | Path | None = None) -> str:
        """The last folder saved into, else the folder of `model` (e.g. the model B the user
        opened), else the last model folder, else home; never the resources or the versions cache."""
        dirs = [str(self.settings.value("last_save_dir", "") or ""), str(Path(model).parent) if model else "",
                str(self.settings.value("last_dir", "") or "")]
        for d in dirs:
            if d and Path(d).is_dir() and not in_resources(d) and not in_versions_cache(d):
                return d
        return str(Path.home())

    def remember_save_dir(self, path: str | Path, is_folder: bool = False) -> None:
        """The folder of a file the user saved (or the folder itself), for the next save dialog."""
        d = Path(path) if is_folder else Path(path).parent
        self.settings.setValue("last_save_dir", str(d.resolve()))


def in_resources(path: str | Path) -> bool:
    """True for the app's bundled resources folder or anything below it."""
    try:
        return Path(path).resolve().is_relative_to(resources_dir())
    except OSError:
        return False
