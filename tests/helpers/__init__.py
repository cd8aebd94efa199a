"""Test helpers, imported as `tests.helpers.<module>` (pytest puts the repository root on the
path, `pythonpath` in pyproject.toml): converter-built fixture models and their cache
(`fixture_models`), requantize / task / audit / hostile-file fixtures, work functions for the
worker-process tests (`isolation_helpers`), fuzz mutations, and GUI waiting helpers."""
