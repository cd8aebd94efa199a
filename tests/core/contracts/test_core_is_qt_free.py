"""inspector.core must never import Qt or pyqtgraph: everything the GUI shows comes from core."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[3] / "inspector" / "core"
FORBIDDEN = ("PySide6", "PyQt5", "PyQt6", "shiboken6", "pyqtgraph")
FORBIDDEN_INSPECTOR = ("inspector.gui", "inspector.cli")


def core_modules() -> list[str]:
    """Every module of inspector.core, subpackages included, as dotted names."""
    mods = []
    for py in sorted(CORE.rglob("*.py")):
        parts = py.relative_to(CORE.parent.parent).with_suffix("").parts
        mods.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return mods


def test_no_qt_gui_or_cli_imports_in_source():
    offenders = []
    for py in CORE.rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            offenders += [
                f"{py.relative_to(CORE)}: {n}"
                for n in names
                if n.split(".")[0] in FORBIDDEN or n.startswith(FORBIDDEN_INSPECTOR)
            ]
    assert not offenders, offenders


def test_the_contract_sees_every_module():
    mods = core_modules()
    assert "inspector.core.compare.comparison" in mods and "inspector.core.tflite.model" in mods
    assert len(mods) > 60


def test_importing_all_of_core_loads_no_qt_gui_or_cli():
    code = (
        "import importlib, sys\n"
        f"for m in {core_modules()!r}: importlib.import_module(m)\n"
        f"bad = [m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r} or m.startswith({FORBIDDEN_INSPECTOR!r})]\n"
        "print(bad); sys.exit(1 if bad else 0)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
