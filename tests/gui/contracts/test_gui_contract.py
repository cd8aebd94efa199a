"""The shape of inspector.gui: a folder per feature, features that get their collaborators, one
event path.

- A feature (a folder of inspector/gui other than `views`) imports no other feature's modules;
  shared widgets (`views`) and the shared services (relay, ui_services, workers, recent) import
  no feature. Only the composition (main_window, app) imports features.
- A feature never reaches through the main window: no `window` names, no `.window` attributes,
  no `statusBar()`; errors and status go through `UiServices` (`ui.show_error`, `ui.status`).
- Every AppState event reaches Qt through `gui/relay.py`: no GUI module connects to one itself
  (checked in the source, and on a live window by who the state's subscribers are).
Imports inside functions and under TYPE_CHECKING count too.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

GUI = Path(__file__).resolve().parents[3] / "inspector" / "gui"
SHARED = "views"
COMPOSITION = {"main_window", "app"}
STATE_NAMES = re.compile(r"(^|\.)(state|st|app_state)$")  # how GUI code names the AppState


def features(root: Path = GUI) -> set[str]:
    return {p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").exists() and p.name != SHARED}


def app_state_events() -> set[str]:
    from inspector.core.state.app_state import AppState, Event

    return {k for k, v in vars(AppState()).items() if isinstance(v, Event)}


def _imported(tree: ast.AST) -> set[str]:
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out |= {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
    return out


def import_violations(py: Path, root: Path = GUI) -> list[str]:
    """Features of inspector.gui that `py` may not import, and does."""
    rel = py.relative_to(root)
    own = rel.parts[0] if len(rel.parts) > 1 else None
    if own is None and py.stem in COMPOSITION:
        return []
    feats = features(root)
    bad = []
    for mod in sorted(_imported(ast.parse(py.read_text()))):
        parts = mod.split(".")
        if parts[:2] == ["inspector", "gui"] and len(parts) > 2 and parts[2] in feats and parts[2] != own:
            bad.append(f"{rel}: imports {mod}")
    return sorted(set(bad))


def reach_violations(source: str, name: str, events: set[str]) -> list[str]:
    """Window lookups, status bar / banner calls beside UiServices, and AppState subscriptions."""
    bad: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id == "window":
            bad.append((node.lineno, f"{name}:{node.lineno}: uses a `window`"))
        elif isinstance(node, ast.Attribute) and node.attr == "window":
            bad.append((node.lineno, f"{name}:{node.lineno}: reads `.window`"))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            f = node.func
            if f.attr == "statusBar":
                bad.append((node.lineno, f"{name}:{node.lineno}: calls statusBar() (use ui.status)"))
            elif f.attr in ("show_error", "clear_error") and not ast.unparse(f.value).endswith("ui"):
                bad.append((node.lineno, f"{name}:{node.lineno}: {ast.unparse(f)} (errors go through ui)"))
            elif (f.attr == "connect" and isinstance(f.value, ast.Attribute) and f.value.attr in events
                  and STATE_NAMES.search(ast.unparse(f.value.value))):
                bad.append((node.lineno, f"{name}:{node.lineno}: {ast.unparse(f)} connects to AppState around the relay"))
    return [text for _line, text in sorted(bad)]


def _feature_modules(root: Path = GUI) -> list[Path]:
    return sorted(py for f in features(root) for py in (root / f).rglob("*.py"))


def test_a_feature_imports_no_other_feature():
    assert len(features()) >= 8  # the layout is by feature
    bad = [v for py in sorted(GUI.rglob("*.py")) for v in import_violations(py)]
    assert bad == []


def test_features_do_not_reach_through_the_window():
    events = app_state_events()
    bad = [v for py in _feature_modules() for v in reach_violations(py.read_text(), str(py.relative_to(GUI)), events)]
    assert bad == []


def test_no_gui_module_connects_to_app_state_events():
    events = app_state_events()
    bad = []
    for py in sorted(GUI.rglob("*.py")):
        if py.name == "relay.py":
            continue
        bad += [v for v in reach_violations(py.read_text(), py.name, events) if "AppState" in v]
    assert bad == []


def test_the_checks_catch_what_they_forbid(tmp_path):
    events = {"options_changed", "versions_changed"}
    code = ("def f(window, self, c, ui):\n"
            "    window.requantize_panel.editor.set_plan(1)\n"
            "    self.window.statusBar().showMessage('x')\n"
            "    self.banner_owner.show_error('x')\n"
            "    c.state.options_changed.connect(print)\n"
            "    self.state.versions_changed.connect(print)\n"
            "    c.options_changed.connect(print)\n"  # a Qt signal of a controller: allowed
            "    ui.show_error('fine')\n")
    found = reach_violations(code, "m.py", events)
    assert [v.split(": ", 1)[0] for v in found] == ["m.py:2", "m.py:3", "m.py:3", "m.py:4", "m.py:5", "m.py:6"]
    for f in ("compare", "requantize", "views"):
        (tmp_path / f).mkdir()
        (tmp_path / f / "__init__.py").write_text("")
    (tmp_path / "requantize" / "feature.py").write_text(
        "from inspector.gui.compare.feature import CompareFeatures\nfrom inspector.gui.views.sizing import fit\n")
    (tmp_path / "views" / "w.py").write_text("def g():\n    import inspector.gui.compare.source\n")
    (tmp_path / "main_window.py").write_text("from inspector.gui.compare.feature import CompareFeatures\n")
    found = [v for py in sorted(tmp_path.rglob("*.py")) for v in import_violations(py, tmp_path)]
    assert found == ["requantize/feature.py: imports inspector.gui.compare.feature",
                     "requantize/feature.py: imports inspector.gui.compare.feature.CompareFeatures",
                     "views/w.py: imports inspector.gui.compare.source"]


def test_a_live_window_subscribes_to_the_state_only_through_the_relay(window):
    """Every subscriber of every event of an open window's AppState and of its requantize flow
    (the plan draft, Suggest's result, the awaited run) is the relay's (or core's)."""
    from inspector.core.events import Event

    state = window.controller.state
    owners = {"state": state, "state.requantize": state.requantize, "state.requantize.draft": state.requantize.draft}
    outside, counted = [], 0
    for owner_name, owner in owners.items():
        for name, event in sorted(vars(owner).items()):
            if not isinstance(event, Event):
                continue
            counted += len(event._subscribers)
            for fn in event._subscribers:
                where = Path(fn.__code__.co_filename).resolve()
                if where.is_relative_to(GUI) and where.name != "relay.py":
                    outside.append(f"{owner_name}.{name}: {fn.__qualname__} ({where.relative_to(GUI)})")
    assert app_state_events() <= set(vars(state)) and len(state.requantize.draft.changed._subscribers) >= 1
    assert counted > 10 and outside == []
