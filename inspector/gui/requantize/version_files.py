"""Saving versions of model B and applying those a session restores (a mixin of
`RequantizeController`, which provides `state`, `versions`, `current`, `ui`, `controller`,
the `saved` signal, `version()`, `_show_current()`, `comparison_options()` and `_protected()`;
the versions themselves live in `AppState`, their session form in `core.state.version_sessions`)."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from inspector.core.errors import InputError, InspectorError
from inspector.core.requantize.quantizer_route import (
    RequantizeResult,
    save_model,
    save_plan,
    save_recipe,
)
from inspector.core.state.app_state import default_reference, same_file
from inspector.core.state.version_sessions import restore_versions, session_versions
from inspector.core.state.versions import Version, file_size

if TYPE_CHECKING:
    from PySide6.QtCore import SignalInstance

    from inspector.core.compare.comparison import CompareOptions
    from inspector.core.state.app_state import AppState
    from inspector.gui.protocols import ModelsController
    from inspector.gui.ui_services import UiServices

__all__ = ["VersionFiles", "file_name", "file_size", "remove_quietly"]


class VersionFiles:
    if TYPE_CHECKING:  # what `RequantizeController` provides
        state: AppState
        ui: UiServices
        controller: ModelsController
        saved: SignalInstance

        @property
        def current(self) -> int | None: ...
        def version(self, i: int | None) -> Version | None: ...
        def comparison_options(self) -> CompareOptions: ...
        def _protected(self, opts: CompareOptions) -> list[str]: ...
        def _fail(self, message: str) -> None: ...
        def _show_current(self) -> None: ...

    # ------------------------------------------------------------------ save
    def save_model_to(self, path: str | Path, version: int | None = None) -> bool:
        """Write the version's model to `path` (atomic); input files are refused."""
        v = self.version(self.current if version is None else version)
        if v is None:
            self._fail("No model B to save.")
            return False
        try:
            data = Path(v.path).read_bytes()
            res = RequantizeResult(data, v.recipe or [], [], None, v.float_path)  # the bytes alone are written
            save_model(res, path, protect=self._protected(self.comparison_options()))
        except InspectorError as e:
            self._fail(f"Could not save the model: {e}")
            return False
        except OSError as e:
            self._fail(f"Could not save the model: {path}: {e.strerror or e}")
            return False
        self.saved.emit(str(path))
        self.ui.status(f"Saved {v.name} to {path}", 8000)
        return True

    def save_recipe_to(self, path: str | Path, version: int | None = None) -> bool:
        """Write the litert-quantizer recipe that reproduces the version; for a surgical version,
        its plan JSON (`requantize FLOAT QUANT --plan` on the model it edited reproduces the bytes)."""
        v = self.version(self.current if version is None else version)
        try:
            if v is not None and v.surgical:
                save_plan(v.plan, path, protect=self._protected(self.comparison_options()))
                self.saved.emit(str(path))
                self.ui.status(f"Saved the plan of {v.name} to {path}", 8000)
                return True
            if v is None or not v.recipe:
                raise InputError(f"{v.name if v else 'model B'} was opened, not produced here, so it has no recipe; choose a requantized version")
            res = RequantizeResult(b"", v.recipe, [], None, v.float_path)  # the recipe alone is written
            save_recipe(res, path, protect=self._protected(self.comparison_options()))
        except InspectorError as e:
            self._fail(f"Could not save the recipe: {e}")
            return False
        self.saved.emit(str(path))
        self.ui.status(f"Saved the recipe of {v.name} to {path}", 8000)
        return True

    # ------------------------------------------------------------------ sessions
    def session_plans(self) -> list[dict]:
        """Every version (v0 included) with its plan, recipe and comparison, for session files."""
        return session_versions(self.state)

    def restore_session_plans(self, plans: list[dict]) -> None:
        """Re-list a session's versions whose files still exist (model B among them), with the
        comparisons they had; versions whose file is gone are reported."""
        a, b = self.controller.models["A"], self.controller.models["B"]
        if a is None or b is None:
            return
        restored, missing = restore_versions(plans, a.path, b.path, self.version(0))
        current = next((i for i, v in enumerate(restored) if same_file(v.path, b.path)), None)
        self.restore_versions(restored, current, default_reference(restored, current) if current is not None else None, missing)

    def restore_versions(self, versions: list[Version], current: int | None, reference: int | None, missing: list[str]) -> None:
        """Apply restored versions (a session's): model B is `current`; its shown comparison is kept
        when the session had none for it."""
        if versions and current is not None:
            shown = self.version(self.current)
            b = versions[current]
            if b.comparison is None and shown is not None and same_file(shown.path, b.path):
                b.comparison = shown.comparison
            self.state.set_versions(versions, current, reference)
            self._show_current()
        if missing:
            self.ui.show_error(f"Versions of model B not restored, their files no longer exist: {', '.join(missing)}")


def file_name(name: str) -> str:
    """'v1 keep-float logits, softmax' -> 'v1_keep-float_logits_softmax.tflite' (unique per run)."""
    slug = re.sub(r"[^A-Za-z0-9.+-]+", "_", name).strip("_")[:80]
    return f"{slug}_{next(_serial)}.tflite"


_serial = itertools.count(1)


def remove_quietly(path: str) -> None:
    """Remove a file this app wrote into its versions folder (an edit that changed nothing)."""
    try:
        os.remove(path)
    except OSError:
        pass
