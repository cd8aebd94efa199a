"""Session-wide test setup: offscreen Qt, quiet TensorFlow, cached converter-built fixtures."""

from __future__ import annotations

import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
# Prepared models are not kept on disk between test processes: a test that patches how they are
# built must not leave its model to the next one (tests/core/runtime/test_prepared_cache.py turns it on).
os.environ.setdefault("TFLITE_INSPECTOR_NO_DISK_CACHE", "1")

import pytest  # noqa: E402

from tests.helpers.fixture_models import FixtureCache  # noqa: E402
from tests.helpers.paths import EXAMPLES, REPO  # noqa: E402


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


@pytest.fixture(scope="session")
def cnn_pair(fixtures) -> tuple[Path, Path]:
    """The fixture CNN and its int8 twin: 32x32x3 input, conv, depthwise, residual add, pool, a
    flatten that computes its shape (SHAPE, STRIDED_SLICE, PACK), dense, softmax; the structure of
    the first bundled example, for tests that read it (the trained digits example has none of it)."""
    return fixtures.path("float"), fixtures.path("int8")



@pytest.fixture(scope="session")
def keras_models() -> Path:
    """The folder of the Keras / QAT fixtures (QAT MLP, QAT and float CNN as .h5, .keras and
    SavedModel, the converter's int8 models, inputs): built in a subprocess, cached (keras_fixtures.py)."""
    from tests.helpers.keras_fixtures import keras_fixture_dir

    return keras_fixture_dir(REPO / ".fixture-cache")


@pytest.fixture(scope="session")
def keras_other() -> Path:
    """A second, independent training of the QAT MLP (`keras_other_fixtures.py`): with
    `keras_models`' mlp_qat it makes an unrelated Keras / TFLite pair. Built once, cached."""
    from tests.helpers.keras_other_fixtures import keras_other_dir

    return keras_other_dir(REPO / ".fixture-cache")


@pytest.fixture(scope="session")
def keras_twin_cache() -> Path:
    """Where tests keep Keras models' float twins (`keras.for_view.cached_twins`): reused across
    runs (a twin is keyed by its model's path, size and modification time), never the user's cache.
    It is the default cache folder under XDG_CACHE_HOME=`keras_xdg_cache` (the CLI's)."""
    return REPO / ".fixture-cache" / "xdg" / "tflite-inspector" / "keras-twins"


@pytest.fixture(scope="session")
def keras_xdg_cache() -> Path:
    """XDG_CACHE_HOME for CLI runs on Keras models: their float twins go to `keras_twin_cache`."""
    return REPO / ".fixture-cache" / "xdg"
