"""Session-wide test setup: offscreen Qt, quiet TensorFlow, cached converter-built fixtures."""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")

import pytest  # noqa: E402

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
sys.path.insert(0, str(TESTS))

from fixture_models import FIXTURES, FixtureCache  # noqa: E402

EXAMPLES = REPO / "resources" / "examples"


@pytest.fixture(scope="session")
def fixtures() -> FixtureCache:
    """Converter-built models, built once and cached in .fixture-cache/<key>/ (see fixture_models.py)."""
    return FixtureCache(REPO / ".fixture-cache")


@pytest.fixture(scope="session")
def fixture_path(fixtures):
    """fixture_path("int8") -> Path of that fixture model."""
    return fixtures.path


@pytest.fixture(scope="session")
def example_pair() -> tuple[Path, Path]:
    return EXAMPLES / "example_float.tflite", EXAMPLES / "example_int8.tflite"


ALL_FIXTURES = tuple(FIXTURES)
