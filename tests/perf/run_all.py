"""Run every benchmark in tests/perf (`make bench`): each bench_*.py script in its own process,
bench_limit.py first (issue 36's table: every row side by side, in one run, the GUI's launch to
its first figure included: bench_gui_launch.py, not run again on its own).

Opt-in (disk and time): bench_big_transformer.py (~3.4 GB of generated models, minutes) runs
only with TFLITE_INSPECTOR_BIG_BENCH=1; bench_cli.py (the MobileNetV2 rows of bench_limit.py,
round by round) only with TFLITE_INSPECTOR_ROUNDS_BENCH=1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OPT_IN = {"bench_big_transformer.py": "TFLITE_INSPECTOR_BIG_BENCH", "bench_cli.py": "TFLITE_INSPECTOR_ROUNDS_BENCH"}
FIRST = "bench_limit.py"
PART_OF_FIRST = {"bench_gui_launch.py"}  # its row is in bench_limit.py's table


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py"), key=lambda p: (p.name != FIRST, p.name)):
        if script.name == "bench_models.py" or script.name in PART_OF_FIRST:  # builds models, no measurement; or run by FIRST
            continue
        flag = OPT_IN.get(script.name)
        if flag and os.environ.get(flag) != "1":
            print(f"=== {script.name}: skipped (set {flag}=1 to run it)", flush=True)
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
