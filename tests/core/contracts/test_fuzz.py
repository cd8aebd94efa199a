"""Fuzz corpus: mutated fixture models never crash, hang or raise anything but ModelFormatError.

2560 deterministic cases (8 mutation kinds x 8 seed models x 40) run in-process through what
`info` does (parse, summary JSON and text, every tensor's data); a handful also run through
the real CLI in subprocesses (exit 0 or 2, one stderr line, no traceback).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.fuzz_mutations import KINDS, SeedModel, exercise, mutate

SEEDS = ("multi_subgraph", "sparse", "stateful", "stateful_int8", "int8", "float16", "a16w8", "dynamic")
CASES_PER_KIND = 40
CASE_LIMIT_S = 2.0  # per case; real cases take milliseconds
REPO = Path(__file__).resolve().parents[3]


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


@pytest.fixture(scope="module")
def seeds(fixture_path) -> list[SeedModel]:
    return [SeedModel.load(n, fixture_path(n)) for n in SEEDS]


def test_fuzz_corpus(seeds, tmp_path):
    outcomes: Counter = Counter()
    failures = []
    slowest = 0.0
    old = signal.signal(signal.SIGALRM, _alarm)
    t0 = time.perf_counter()
    try:
        for si, seed in enumerate(seeds):
            for ki, kind in enumerate(KINDS):
                for c in range(CASES_PER_KIND):
                    case_seed = (si * 1000 + ki) * 1000 + c
                    data = mutate(seed, kind, np.random.default_rng(case_seed), seeds)
                    p = tmp_path / f"{seed.name}-{kind}-{c}.tflite"
                    p.write_bytes(data)
                    start = time.perf_counter()
                    signal.setitimer(signal.ITIMER_REAL, 10.0)
                    try:
                        outcomes[exercise(p)] += 1
                    except Hang:
                        failures.append(f"{seed.name}/{kind}/seed {case_seed}: no answer after 10 s")
                    except Exception as e:  # noqa: BLE001 - any other exception is the defect we look for
                        failures.append(f"{seed.name}/{kind}/seed {case_seed}: {type(e).__name__}: {e}")
                    finally:
                        signal.setitimer(signal.ITIMER_REAL, 0)
                    dt = time.perf_counter() - start
                    slowest = max(slowest, dt)
                    if dt > CASE_LIMIT_S:
                        failures.append(f"{seed.name}/{kind}/seed {case_seed}: took {dt:.2f} s")
                    p.unlink()
    finally:
        signal.signal(signal.SIGALRM, old)
    total = sum(outcomes.values())
    elapsed = time.perf_counter() - t0
    print(f"\nfuzz: {total} cases in {elapsed:.1f} s, {dict(outcomes)}, slowest {slowest * 1e3:.1f} ms")
    assert not failures, "\n".join(failures[:20])
    assert total == len(SEEDS) * len(KINDS) * CASES_PER_KIND >= 1000
    # The corpus must exercise both paths: a fuzzer whose every case is rejected at the header tests little.
    assert outcomes["rejected"] > 0.3 * total and outcomes["ok"] > 0.02 * total


def test_fuzz_through_cli(seeds, tmp_path):
    """A few cases end to end: the CLI answers 0 or 2 with one line, never a traceback."""
    cases = []
    for i, kind in enumerate(("truncate", "offset", "count", "word", "bitflip", "splice")):
        for seed in (seeds[0], seeds[3]):
            p = tmp_path / f"cli-{seed.name}-{kind}.tflite"
            p.write_bytes(mutate(seed, kind, np.random.default_rng(10_000 + i), seeds))
            cases.append(p)
    procs = [
        (p, subprocess.Popen([sys.executable, "-m", "inspector", "info", str(p), "--json", "-"], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for p in cases
    ]
    codes = Counter()
    for p, proc in procs:
        out, err = proc.communicate(timeout=120)
        codes[proc.returncode] += 1
        assert proc.returncode in (0, 2), f"{p.name}: exit {proc.returncode}\n{err}"
        assert "Traceback" not in err, err
        if proc.returncode == 2:
            assert err.count("\n") == 1 and err.startswith(f"tflite-inspector info: {p}: "), err
        else:
            assert json.loads(out)["path"] == str(p)
    assert codes[2] >= 3, codes
