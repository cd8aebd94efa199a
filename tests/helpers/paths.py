"""Where things are: the repository, the tests, the bundled examples; every fixture model's name."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.fixture_models import FIXTURES

TESTS = Path(__file__).resolve().parents[1]
REPO = TESTS.parent
EXAMPLES = REPO / "inspector" / "resources" / "examples"
ALL_FIXTURES = tuple(FIXTURES)
