"""Issue 34 §1: the window's output summary says a model is stateful and that its state was reset
before every sample (as the command line, --json and the report do)."""

from __future__ import annotations

from inspector.core.compare.comparison import compare_models
from inspector.core.compare.options import CompareOptions
from inspector.core.samples.settings import ALL, SampleSettings
from inspector.gui.compare.output_summary import summary_html
from tests.helpers.paths import REPO
from tests.helpers.stateful_fixtures import stateful_fixture_dir


def test_the_output_summary_says_the_model_is_stateful():
    d = stateful_fixture_dir(REPO / ".fixture-cache")
    settings = SampleSettings(count=ALL, source=str(d / "lstm_inputs.npz"))
    result = compare_models(str(d / "lstm_float.tflite"), str(d / "lstm_int8.tflite"), CompareOptions(samples=settings))
    said = "stateful model (2 variable tensors (UNIDIRECTIONAL_SEQUENCE_LSTM)): state reset before every sample"
    assert said in summary_html(result, result.task())
