"""Building the parser and handing a comparison over load no numpy: every command starts light.
`compare` itself then imports what its worker runs once and forks the worker with it
(`runtime.worker.start_default_worker`, tested in tests/core/runtime/test_worker_fork.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_handing_a_comparison_to_the_worker_loads_no_numpy():
    code = (
        "import sys\n"
        "import inspector.core.compare.in_worker, inspector.core.keras.detect, inspector.cli.compare_cmd\n"
        "heavy = sorted(m for m in ('numpy', 'ai_edge_litert', 'tflite') if m in sys.modules)\n"
        "print(','.join(heavy))\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == ""
