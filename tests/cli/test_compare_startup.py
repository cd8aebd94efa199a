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


def test_a_command_line_naming_its_command_imports_no_other_command():
    """`tflite-inspector info M` builds the `info` parser only: the other commands' modules (and
    what they import, such as the requantize plan) are not imported; `--help` still lists all."""
    example = REPO / "inspector" / "resources" / "examples" / "example_int8.tflite"
    code = (
        "import sys\nfrom inspector import cli\n"
        f"code = cli.main(['info', {str(example)!r}])\n"
        "others = sorted(m for m in sys.modules if m.startswith('inspector.cli.') and m.endswith('_cmd'))\n"
        "print(code, ','.join(others), 'inspector.core.requantize.plan' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.split()[-3:] == ["0", "inspector.cli.info_cmd", "False"]
    helped = subprocess.run([sys.executable, "-m", "inspector", "--help"], env=env, capture_output=True, text=True, cwd=REPO)
    assert helped.returncode == 0 and "compare-runtimes" in helped.stdout and "requantize" in helped.stdout
