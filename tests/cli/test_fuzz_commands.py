"""Issue 34 §12: mutated inputs through every command that reads a model or inputs, with every
output option: exit 0, 1 or 2, never a traceback; exit 2 is one line naming the command and
nothing is written; no process is left behind (checked on a subprocess per file family).

Routes: .tflite as FLOAT and as QUANT of compare, report, graph, compare-runtimes, extract,
requantize (both routes), suggest and info; .npz / .npy as --inputs of compare, requantize and
extract; a saved plan (--plan) and recipe (--recipe) of requantize; .h5, .keras and SavedModel folders through info, compare and convert. Each route runs
`CASES` mutations in CI (default 2: the kinds in turn, deterministic seeds);
TFLITE_INSPECTOR_FUZZ_CASES=N runs N per route (and, for the Keras files, bit flips anywhere,
which reach TensorFlow: slow).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from inspector.cli import main
from inspector.core import writing
from tests.helpers.fuzz_mutations import (
    BYTE_KINDS,
    JSON_KINDS,
    KINDS,
    NPZ_KINDS,
    SeedModel,
    mutate,
    mutate_bytes,
    mutate_json,
    mutate_npz,
)
from tests.helpers.paths import REPO

EX = REPO / "inspector" / "resources" / "examples"
F, Q, NPZ = EX / "example_float.tflite", EX / "example_int8.tflite", EX / "example_inputs.npz"
CASES = int(os.environ.get("TFLITE_INSPECTOR_FUZZ_CASES", "2"))
EXTENDED = "TFLITE_INSPECTOR_FUZZ_CASES" in os.environ
# In CI the Keras files are cut short or lose their signature, which the checks before TensorFlow
# catch; the extended run also flips bits anywhere (files that then reach TensorFlow, ~20 s each).
KERAS_KINDS = (*BYTE_KINDS, "signature") if EXTENDED else ("truncate", "signature")
FAST = ["--samples", "1"]

# route -> (what is mutated, argv with {m} the mutated file and {o} the output folder)
ROUTES: dict[str, tuple[str, list[str]]] = {
    "info": ("int8", ["info", "{m}", "--json", "{o}/i.json"]),
    "compare FLOAT": ("float", ["compare", "{m}", str(Q), *FAST, "--no-isolated", "--json", "{o}/c.json", "--csv", "{o}/c.csv"]),
    "compare QUANT": ("int8", ["compare", str(F), "{m}", *FAST, "--json", "{o}/c.json"]),
    "report QUANT": ("int8", ["report", str(F), "{m}", *FAST, "--no-isolated", "--html", "{o}/r.html", "--json", "{o}/r.json",
                              "--csv", "{o}/r.csv", "--model-explorer", "{o}/me.json"]),
    "report alone": ("int8", ["report", "{m}", "--json", "{o}/r.json"]),
    "graph": ("int8", ["graph", "{m}", "--svg", "{o}/g.svg"]),
    "compare-runtimes": ("int8", ["compare-runtimes", "{m}", *FAST, "--json", "{o}/x.json"]),
    "extract": ("int8", ["extract", "{m}", "--op", "1", *FAST, "--out", "{o}/repro"]),
    "requantize quantizer": ("float", ["requantize", "{m}", *FAST, "--out", "{o}/q.tflite", "--save-recipe", "{o}/r.json",
                                       "--json", "{o}/j.json"]),
    "requantize surgical": ("int8", ["requantize", str(F), "{m}", "--keep-float", "op:1", "--out", "{o}/q.tflite",
                                     "--save-plan", "{o}/p.json"]),
    "suggest": ("int8", ["suggest", str(F), "{m}", "--target-sqnr", "30", "--samples", "2", "--candidates", "1",
                         "--max-evaluations", "1", "--json", "{o}/s.json", "--out", "{o}/s.tflite", "--save-plan", "{o}/p.json"]),
    "compare --inputs npz": ("npz", ["compare", str(F), str(Q), "--inputs", "{m}", "--no-isolated", "--json", "{o}/c.json"]),
    "compare --inputs npy": ("npy", ["compare", str(F), str(Q), "--inputs", "{m}", "--no-isolated", "--json", "{o}/c.json"]),
    "requantize --inputs npz": ("npz", ["requantize", str(F), "--inputs", "{m}", "--out", "{o}/q.tflite"]),
    "extract --inputs npz": ("npz", ["extract", str(Q), "--op", "1", "--inputs", "{m}", "--out", "{o}/repro"]),
    "requantize --plan": ("plan", ["requantize", str(F), str(Q), "--plan", "{m}", "--out", "{o}/q.tflite"]),
    "requantize --recipe": ("recipe", ["requantize", str(F), *FAST, "--recipe", "{m}", "--out", "{o}/q.tflite"]),
    "info h5": ("h5", ["info", "{m}", "--json", "{o}/i.json"]),
    "compare keras": ("keras", ["compare", "{m}", "{q}", *FAST, "--json", "{o}/c.json"]),
    "convert SavedModel": ("saved_model", ["convert", "{m}", "--out-dir", "{o}/twins", "--json", "{o}/t.json"]),
}  # fmt: skip


def _mutated(kind: str, case: int, d: Path, seeds: dict, keras_models: Path | None) -> Path:
    rng = np.random.default_rng(34_000 + case * 7919 + sum(map(ord, kind)))
    if kind in ("float", "int8"):
        mk = KINDS[case % len(KINDS)]
        p = d / "m.tflite"
        p.write_bytes(mutate(seeds[kind], mk, rng, [seeds["float"], seeds["int8"]]))
    elif kind == "npz":
        p = d / "x.npz"
        p.write_bytes(mutate_npz(NPZ, NPZ_KINDS[case % len(NPZ_KINDS)], rng))
    elif kind == "npy":
        p = d / "x.npy"
        with np.load(NPZ) as z:
            first = z[sorted(z.files)[0]]
        np.save(p, first)
        p.write_bytes(mutate_bytes(p.read_bytes(), BYTE_KINDS[case % len(BYTE_KINDS)], rng))
    elif kind in ("plan", "recipe"):
        p = d / f"{kind}.json"
        p.write_bytes(mutate_json(seeds[kind], JSON_KINDS[case % len(JSON_KINDS)], rng))
    elif kind in ("h5", "keras"):
        p = d / f"m.{kind}"
        p.write_bytes(mutate_bytes((keras_models / f"cnn_float.{kind}").read_bytes(), KERAS_KINDS[case % len(KERAS_KINDS)], rng))
    elif kind == "saved_model":
        p = d / "sm"
        shutil.copytree(keras_models / "cnn_float_sm", p)
        pb = p / "saved_model.pb"
        pb.write_bytes(mutate_bytes(pb.read_bytes(), KERAS_KINDS[case % len(KERAS_KINDS)], rng))
    else:
        raise KeyError(kind)
    return p


@pytest.fixture(scope="module")
def seeds(tmp_path_factory):
    """The example pair, and a saved plan and recipe made from it by the commands themselves."""
    d = tmp_path_factory.mktemp("seeds")
    writing.clear_protected_inputs()
    assert main(["requantize", str(F), str(Q), "--keep-float", "op:1", "--out", str(d / "s.tflite"),
                 "--save-plan", str(d / "plan.json")]) == 0  # fmt: skip
    assert main(["requantize", str(F), *FAST, "--keep-float", "op:1", "--out", str(d / "r.tflite"),
                 "--save-recipe", str(d / "recipe.json")]) == 0  # fmt: skip
    writing.clear_protected_inputs()
    return {"float": SeedModel.load("example_float", F), "int8": SeedModel.load("example_int8", Q),
            "plan": (d / "plan.json").read_bytes(), "recipe": (d / "recipe.json").read_bytes()}  # fmt: skip


def _audit_of_a_refused_model(argv: list[str], err: list[str], left: list[str]) -> bool:
    """`report` documents a model the runtime refuses: its HTML / JSON hold the audit that says
    why and it exits 2 (README; test_report_cli); the comparison's CSV / Model Explorer files,
    which need the comparison, are not written. That is the one exit 2 with files."""
    return (argv[0] == "report" and len(err) == 1 and "comparison not run" in err[0]
            and set(left) <= {"r.html", "r.json"})  # fmt: skip


def _run_case(argv: list[str], capsys) -> tuple[int | None, list[str], str]:
    writing.clear_protected_inputs()
    try:
        code = main(argv)
        problem = ""
    except BaseException as e:  # noqa: BLE001 - anything escaping main is the defect looked for
        code, problem = None, "".join(traceback.format_exception(e))[-1500:]
    err = capsys.readouterr().err
    writing.clear_protected_inputs()
    return code, err.strip().splitlines(), problem


@pytest.mark.parametrize("route", list(ROUTES))
def test_fuzz_every_command(route, seeds, tmp_path, capsys, request):
    kind, template = ROUTES[route]
    keras_models = request.getfixturevalue("keras_models") if kind in ("h5", "keras", "saved_model") else None
    failures, outcomes = [], Counter()
    t0 = time.perf_counter()
    for case in range(CASES):
        d = tmp_path / f"case{case}"
        out = d / "out"
        out.mkdir(parents=True)
        m = _mutated(kind, case, d, seeds, keras_models)
        q = str(keras_models / "cnn_float_int8.tflite") if keras_models else ""
        argv = [a.format(m=m, o=out, q=q) for a in template]
        code, err, problem = _run_case(argv, capsys)
        outcomes[code] += 1
        where = f"{route} case {case} ({m.name})"
        if problem or any("Traceback" in line for line in err):
            failures.append(f"{where}: traceback\n{problem or chr(10).join(err)}")
        elif code not in (0, 1, 2):
            failures.append(f"{where}: exit {code}: {err}")
        elif code == 2:
            if len(err) != 1 or not err[0].startswith(f"tflite-inspector {argv[0]}: "):
                failures.append(f"{where}: exit 2 without one line: {err}")
            left = sorted(p.name for p in out.rglob("*"))
            if left and _audit_of_a_refused_model(argv, err, left):
                outcomes["2: audit report of a model the runtime refused"] += 1
            elif left:
                failures.append(f"{where}: exit 2 but wrote {left}")
    print(f"\nfuzz {route}: {CASES} cases in {time.perf_counter() - t0:.1f} s, exits {dict(outcomes)}")
    assert not failures, "\n".join(failures)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_fuzz_cases_leave_no_process(seeds, keras_models, tmp_path):
    """One mutated file per family through the real program: no traceback, one line, and no
    process of its session left once it has exited."""
    from tests.cli.test_clean_exits import _session_processes

    cases = [("int8", ["compare", str(F), "{m}", *FAST, "--json", "{o}/c.json"], 2),
             ("npz", ["requantize", str(F), "--inputs", "{m}", "--out", "{o}/q.tflite"], 7),
             ("h5", ["convert", "{m}", "--out-dir", "{o}/twins"], 0)]  # fmt: skip
    procs = []
    for i, (kind, template, case) in enumerate(cases):
        d = tmp_path / f"p{i}"
        (d / "out").mkdir(parents=True)
        m = _mutated(kind, case, d, seeds, keras_models)
        argv = [a.format(m=m, o=d / "out") for a in template]
        procs.append((argv, d / "out", subprocess.Popen([sys.executable, "-m", "inspector", *argv], cwd=REPO, text=True,
                                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                        start_new_session=True)))  # fmt: skip
    for argv, out, p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err, (argv, err)
        assert list(out.rglob("*")) == [] and _session_processes(p.pid) == [], argv


@pytest.mark.parametrize(("route", "case", "says"), [
    ("requantize --inputs npz", 2, "cannot read arrays: Error -3 while decompressing data"),  # was zlib.error, a traceback
    ("compare --inputs npz", 39, "NaN or infinite value(s) as float32"),  # was ValueError from the JSON writer
    ("requantize --recipe", 1, "the recipe is not UTF-8 text"),  # was UnicodeDecodeError
    ("requantize --recipe", 42, "'regex' must be a string"),  # was TypeError from re.compile
])  # fmt: skip
def test_what_the_fuzz_found(route, case, says, seeds, tmp_path, capsys):
    kind, template = ROUTES[route]
    out = tmp_path / "out"
    out.mkdir()
    m = _mutated(kind, case, tmp_path, seeds, None)
    if kind == "recipe":
        import json

        rules = json.loads(m.read_bytes()) if case == 42 else None
        assert rules is None or any(not isinstance(r.get("regex"), str) for r in rules if isinstance(r, dict))  # the case still holds the finding
    argv = [a.format(m=m, o=out, q="") for a in template]
    code, err, problem = _run_case(argv, capsys)
    assert not problem and code == 2 and len(err) == 1 and says in err[0], (problem, err)
    assert list(out.iterdir()) == []
