"""Long-running fuzz target for the model reader (not part of the default test run).

    .venv/bin/python tests/fuzz/fuzz_model.py --examples 20000           # hypothesis
    .venv/bin/python tests/fuzz/fuzz_model.py --examples 2000 --runtime  # + LiteRT in a worker
    .venv/bin/python tests/fuzz/fuzz_model.py --atheris -- -max_total_time=600  # if atheris is installed

Every command that reads a model, inputs, a plan or a recipe, with its output options, is fuzzed
by tests/cli/test_fuzz_commands.py (2 cases per route in CI); for a long run of it:

    TFLITE_INSPECTOR_FUZZ_CASES=300 .venv/bin/python -m pytest -s tests/cli/test_fuzz_commands.py

Each example stacks 1-4 structure-aimed mutations (tests/fuzz_mutations.py) and optional raw
byte overwrites on a fixture model, then asserts that what `info` does returns or raises
`ModelFormatError` within 2 s. With --runtime, files the reader accepts are also run once by
LiteRT in an isolated worker: a runtime crash there is counted (it is the runtime's defect;
the app survives it by design) and the first few are kept in .fixture-cache/fuzz-crashes/.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
sys.path[:0] = [str(REPO)]  # tests.helpers

from tests.helpers.fuzz_mutations import KINDS, SeedModel, exercise, mutate  # noqa: E402

SEEDS = ("multi_subgraph", "sparse", "stateful", "stateful_int8", "int8", "float16", "a16w8", "dynamic", "int8_io")


class Target:
    def __init__(self, runtime: bool) -> None:
        from tests.helpers.fixture_models import FixtureCache

        cache = FixtureCache(REPO / ".fixture-cache")
        self.seeds = [SeedModel.load(n, cache.path(n)) for n in SEEDS]
        self.dir = Path(tempfile.mkdtemp(prefix="tqi-fuzz-"))
        self.outcomes: Counter = Counter()
        self.runtime = runtime
        self.worker = None
        self.crash_dir = REPO / ".fixture-cache" / "fuzz-crashes"
        if runtime:
            from inspector.core.runtime.worker import WorkerProcess

            self.worker = WorkerProcess()

    def build(self, seed_index: int, steps: list[tuple[int, int]], raw: list[tuple[int, bytes]]) -> bytes:
        import numpy as np

        seed = self.seeds[seed_index % len(self.seeds)]
        data = seed.data
        for kind, s in steps:
            cur = SeedModel(seed.name, data, seed.offsets, seed.lengths, seed.structure[seed.structure < len(data)])
            if len(cur.structure) == 0 or len(data) < 8:
                break
            data = mutate(cur, KINDS[kind % len(KINDS)], np.random.default_rng(s), self.seeds)
        buf = bytearray(data)
        for pos, chunk in raw:
            if buf:
                p = pos % len(buf)
                buf[p : p + len(chunk)] = chunk
        return bytes(buf)

    def check(self, data: bytes) -> str:
        p = self.dir / "case.tflite"
        p.write_bytes(data)
        t0 = time.perf_counter()
        outcome = exercise(p)
        dt = time.perf_counter() - t0
        assert dt < 2.0, f"took {dt:.2f} s"
        if outcome == "ok" and self.worker is not None:
            outcome = self._run(p, data)
        self.outcomes[outcome] += 1
        p.unlink()
        return outcome

    def _run(self, p: Path, data: bytes) -> str:
        from inspector.core.errors import InspectorError
        from inspector.core.runtime.probe import probe_model

        try:
            self.worker.run(probe_model, str(p), timeout=20, step="fuzz run", models=(str(p),))
            return "ok+ran"
        except InspectorError as e:
            reason = getattr(e, "reason", None)
            if reason and reason.startswith("SIG") or reason == "timeout":
                n = sum(v for k, v in self.outcomes.items() if k.startswith("runtime "))
                if n < 20:
                    self.crash_dir.mkdir(parents=True, exist_ok=True)
                    (self.crash_dir / f"crash-{n}-{reason}.tflite").write_bytes(data)
                return f"runtime {reason}"
            return "ok+runtime refused"


def run_hypothesis(t: Target, examples: int) -> None:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    step = st.tuples(st.integers(0, len(KINDS) - 1), st.integers(0, 2**32 - 1))
    raw = st.tuples(st.integers(0, 2**31), st.binary(min_size=1, max_size=16))

    @settings(max_examples=examples, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.integers(0, len(SEEDS) - 1), st.lists(step, min_size=1, max_size=4), st.lists(raw, max_size=3))
    def prop(seed_index, steps, raws):
        t.check(t.build(seed_index, steps, raws))

    prop()


def run_atheris(t: Target, argv: list[str]) -> None:
    import atheris  # type: ignore[import-not-found]

    def one(data: bytes) -> None:
        fdp = atheris.FuzzedDataProvider(data)
        steps = [(fdp.ConsumeIntInRange(0, len(KINDS) - 1), fdp.ConsumeUInt(4)) for _ in range(fdp.ConsumeIntInRange(1, 4))]
        raws = [(fdp.ConsumeUInt(4), fdp.ConsumeBytes(8)) for _ in range(fdp.ConsumeIntInRange(0, 2))]
        t.check(t.build(fdp.ConsumeIntInRange(0, len(SEEDS) - 1), steps, raws))

    atheris.Setup([sys.argv[0], *argv], one)
    atheris.Fuzz()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=5000)
    ap.add_argument("--runtime", action="store_true", help="also run accepted files in LiteRT (isolated)")
    ap.add_argument("--atheris", action="store_true")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    t = Target(args.runtime)
    t0 = time.perf_counter()
    try:
        if args.atheris:
            run_atheris(t, args.rest)
        else:
            run_hypothesis(t, args.examples)
    finally:
        if t.worker is not None:
            t.worker.close()
        total = sum(t.outcomes.values())
        print(f"{total} cases in {time.perf_counter() - t0:.1f} s: {dict(t.outcomes)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
