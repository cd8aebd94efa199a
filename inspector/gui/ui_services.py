"""What a feature needs from the main window, and nothing more: show an error, a status line,
add or show a tab, a menu or action by name, a strip above the panes, the two model panes, the
settings and recent folders, and the window's open intents. Features take this object (and the
collaborators they call) instead of reaching for attributes of the window; menus a feature adds
stay before Help."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QSettings
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QBoxLayout, QMainWindow, QMenu, QTabWidget, QWidget

if TYPE_CHECKING:
    from inspector.gui.recent import RecentFiles
    from inspector.gui.views.model_pane import ModelPane
    from inspector.gui.views.status import ErrorBanner
    from inspector.gui.workers import Worker


class Window(Protocol):
    """What the services use of the main window (`MainWindow`, a `QMainWindow`)."""

    banner: ErrorBanner
    tabs: QTabWidget

    def show_error(self, text: str, slot: str | None = None, owner: str | None = None) -> None: ...
    def clear_error(self, owner: str) -> None: ...
    def add_tab(self, title: str, widget: QWidget) -> int: ...
    def open_model(self, slot: str, path: str | Path, background: bool = True) -> Worker | None: ...
    def open_files(self, paths: list[str], slot: str | None = None) -> list[Worker]: ...


class UiServices:
    def __init__(self, window: Window, panes: dict[str, ModelPane], settings: QSettings, recent: RecentFiles,
                 strips: QBoxLayout, strips_at: int) -> None:
        if not isinstance(window, QMainWindow):
            raise TypeError("UiServices serves a QMainWindow")
        self._window = window
        self._menus: dict[str, QMenu] = {}
        self._actions: dict[str, QAction] = {}
        self._strips, self._strips_at = strips, strips_at
        self.panes = panes  # "A", "B": the model panes (shared views; features add columns and menus to them)
        self.settings = settings
        self.recent = recent  # last folders and recent files

    @property
    def parent(self) -> QWidget:
        """The widget features parent their objects, actions and dialogs to."""
        return self._window

    # ------------------------------------------------------------------ errors and status
    def show_error(self, text: str, slot: str | None = None, owner: str | None = None) -> None:
        """The red banner: `slot` (a model whose next open hides it), `owner` (a feature whose
        next success hides it, `clear_error`)."""
        self._window.show_error(text, slot, owner)

    def clear_error(self, owner: str) -> None:
        self._window.clear_error(owner)

    def error_shown(self, text: str) -> bool:
        """Whether the banner shows `text` now."""
        banner = self._window.banner
        return banner.isVisible() and text in banner.text

    def status(self, text: str, ms: int = 8000) -> None:
        self._window.statusBar().showMessage(text, ms)

    # ------------------------------------------------------------------ tabs, strips, menus
    def add_tab(self, title: str, widget: QWidget) -> int:
        return self._window.add_tab(title, widget)

    def show_tab(self, widget: QWidget) -> None:
        self._window.tabs.setCurrentWidget(widget)

    def current_tab_index(self) -> int:
        return self._window.tabs.currentIndex()

    def tab_count(self) -> int:
        return self._window.tabs.count()

    def move_tab_last(self, index: int) -> None:
        self._window.tabs.tabBar().moveTab(index, self._window.tabs.count() - 1)

    def add_strip(self, *widgets: QWidget) -> None:
        """Full-width strips right below the error banner (above the strips added before them)."""
        for i, w in enumerate(widgets):
            self._strips.insertWidget(self._strips_at + i, w)

    def register_menu(self, name: str, menu: QMenu) -> QMenu:
        self._menus[name] = menu
        return menu

    def register_action(self, name: str, action: QAction) -> QAction:
        self._actions[name] = action
        return action

    def action(self, name: str) -> QAction | None:
        """A window action by name ("quit", "recent"), for features that place theirs beside it."""
        return self._actions.get(name)

    def insert_actions(self, menu: str, before: str, actions: list[QAction], separator: bool = False) -> None:
        """Put `actions` (then a separator, if asked) in `menu` before the window action `before`
        (at the menu's end when the window has none of that name)."""
        m, at = self.menu(menu), self.action(before)
        for a in actions:
            if at is None:
                m.addAction(a)
            else:
                m.insertAction(at, a)
        if separator:
            if at is None:
                m.addSeparator()
            else:
                m.insertSeparator(at)

    def menu(self, name: str, title: str | None = None) -> QMenu:
        """The menu called `name` ("File", "Compare"...), added before Help (titled `title`,
        with its accelerator) the first time a feature asks for it."""
        if name not in self._menus:
            bar = self._window.menuBar()
            menu = QMenu(title or name, self._window)
            help_menu = self._menus.get("Help")
            if help_menu is not None:
                bar.insertMenu(help_menu.menuAction(), menu)
            else:
                bar.addMenu(menu)
            self._menus[name] = menu
        return self._menus[name]

    # ------------------------------------------------------------------ the window's intents
    def open_model(self, slot: str, path: str) -> Worker | None:
        return self._window.open_model(slot, path)

    def open_files(self, paths: list[str], slot: str | None = None) -> list[Worker]:
        return self._window.open_files(paths, slot)
