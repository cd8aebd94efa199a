"""The layers of inspector.core: subpackages import only from layers below them, and no cycles.

{tflite, codec} <- quantmath <- {samples, runtime, stats} <- compare <- {requantize, keras, graph} <- review <- {viewdata, state}.
`graph` (the model graph, its layout and SVG) sits there too: it uses `compare` and below.
`keras` (Keras / SavedModel / QAT models, TensorFlow imported lazily in the worker) sits beside
`requantize`: it uses `compare` and below, and neither may import the other.
The top-level modules (errors, events, progress, writing) sit below everything and import no subpackage.
Imports inside functions count too: a deferred import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[3] / "inspector" / "core"
RANK = {
    "": 0,  # errors, events, progress, writing
    "text": 0,  # how numbers are written; imports nothing of inspector
    "tflite": 1,
    "codec": 1,  # the JSON codec of the result types (beside tflite)
    "quantmath": 2,
    "samples": 3,
    "runtime": 3,
    "stats": 3,
    "compare": 4,
    "requantize": 5,
    "keras": 5,
    "graph": 5,
    "review": 6,
    "viewdata": 7,
    "state": 7,
}


def _module_name(py: Path) -> str:
    parts = py.relative_to(CORE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _package(mod: str) -> str:
    return mod.split(".")[0] if "." in mod or (CORE / mod).is_dir() else ""


def _imports(py: Path) -> set[str]:
    """Core modules (relative dotted names) that `py` imports anywhere in its body."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(py.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("inspector.core"):
            base = node.module.removeprefix("inspector.core").lstrip(".")
            for a in node.names:
                sub = f"{base}.{a.name}" if base else a.name
                out.add(sub if (CORE / (sub.replace(".", "/") + ".py")).exists() else base)
        elif isinstance(node, ast.Import):
            out |= {a.name.removeprefix("inspector.core.") for a in node.names if a.name.startswith("inspector.core.")}
    return {m for m in out if m}


GRAPH = {_module_name(py): _imports(py) for py in CORE.rglob("*.py") if py.parent != CORE or py.stem != "__init__"}


def test_every_subpackage_has_a_rank_and_a_docstring():
    for d in sorted(p for p in CORE.iterdir() if p.is_dir() and not p.name.startswith("__")):
        assert d.name in RANK, f"new subpackage {d.name}: give it a rank in this test"
        doc = ast.get_docstring(ast.parse((d / "__init__.py").read_text()))
        assert doc and "import" in doc.lower(), f"{d.name}/__init__.py must say what it holds and may import"


def test_core_top_level_is_small():
    top = [p.name for p in CORE.glob("*.py")]
    assert len(top) <= 5, top


def upward(graph: dict[str, set[str]], mod: str) -> list[str]:
    """Dependencies of `mod` in a layer at or above its own (its own subpackage excepted)."""
    mine = _package(mod)
    return sorted(d for d in graph[mod] if _package(d) != mine and RANK[_package(d)] >= RANK[mine])


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for d in sorted(graph.get(m, ())):
            if state.get(d) == 1:
                return [*stack[stack.index(d):], d]
            if d in graph and not state.get(d) and (c := visit(d)):
                return c
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if not state.get(m) and (c := visit(m)):
            return c
    return None


@pytest.mark.parametrize("mod", sorted(GRAPH))
def test_no_upward_or_sideways_import(mod):
    bad = upward(GRAPH, mod)
    assert not bad, f"inspector.core.{mod} imports {bad} (layer {_package(mod) or 'top'} may not depend on them)"


def test_no_cycles():
    cycle = find_cycle(GRAPH)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_checks_catch_what_they_are_for():
    fake = {
        "tflite.model": {"compare.result"},  # upward
        "stats.metrics": {"samples.spec"},  # sideways, same layer
        "compare.result": {"tflite.model", "compare.task"},
        "compare.task": {"compare.result"},  # cycle inside a package
    }
    assert upward(fake, "tflite.model") == ["compare.result"]
    assert upward(fake, "stats.metrics") == ["samples.spec"]
    assert upward(fake, "compare.result") == []
    assert find_cycle(fake) == ["compare.result", "compare.task", "compare.result"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None
