"""Tests of inspector.core: one folder per subpackage (tests/core/compare tests
inspector/core/compare, ...), contracts/ for the checks across core (import layers, no Qt, fuzz); the
tests of core's top-level modules (writing, progress) stay here."""
