"""Run every benchmark in tests/perf (`make bench`): each bench_*.py script in its own process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        if script.name == "bench_models.py":  # builds models, no measurement
            continue
        print(f"=== {script.name}", flush=True)
        rc = subprocess.call([sys.executable, str(script)])
        if rc:
            failed.append(script.name)
    if failed:
        print(f"failed: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
