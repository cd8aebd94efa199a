"""Issue 26 §13: the `[tensorflow]` extra installs one TensorFlow. tf-keras declares a dependency
on `tensorflow`, so an extra that also lists `tensorflow-cpu` installs both distributions into
the same `tensorflow/` folder (2.7 GB of site-packages measured, one overwriting the other).
The hint the CLI and GUI print names the published form and the form that works from a clone."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from inspector.core.keras.detect import INSTALL_HINT

REPO = Path(__file__).resolve().parents[2]


def _names(reqs: list[str]) -> list[str]:
    return [re.split(r"[<>=!~\[; ]", r, maxsplit=1)[0].lower().replace("_", "-") for r in reqs]


def test_one_tensorflow_in_the_extras():
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    for name in ("tensorflow", "dev"):
        names = _names(extras[name])
        tf = [n for n in names if n in ("tensorflow", "tensorflow-cpu", "tf-nightly", "tensorflow-intel")]
        assert tf == ["tensorflow"], (name, tf)  # the one tf-keras requires
        assert {"tf-keras", "tensorflow-model-optimization"} <= set(names), name


def test_the_install_hint_works_from_a_clone_and_matches_the_readme():
    assert "pip install 'tflite-inspector[tensorflow]'" in INSTALL_HINT
    assert "pip install '.[tensorflow]'" in INSTALL_HINT
    readme = (REPO / "README.md").read_text()
    assert "pip install 'tflite-inspector[tensorflow]'" in readme and "pip install '.[tensorflow]'" in readme
    assert "tensorflow-cpu" not in readme.replace("`tensorflow-cpu` as well", "")
