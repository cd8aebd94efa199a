"""Clipping is coloured only when it matters: past the audit's one threshold (HIGH_CLIP_RATE)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from inspector.core.compare.clip_threshold import CLIP_RATE as HIGH_CLIP_RATE
from inspector.core.compare.comparison import CompareOptions, compare_models
from inspector.core.samples.settings import SampleSettings
from inspector.core.viewdata.activations import activation_histogram
from inspector.core.viewdata.layer_series import clipping_matters
from inspector.gui.compare.activation_view import ActivationView
from inspector.gui.views.plot_style import COLOR_CLIP


def test_threshold_is_the_audits():
    assert not clipping_matters(None) and not clipping_matters(0.0) and not clipping_matters(math.nan)
    assert not clipping_matters(HIGH_CLIP_RATE) and clipping_matters(np.nextafter(HIGH_CLIP_RATE, 1))


def test_activation_title_colours_only_real_clipping(qtbot, fixture_path):
    fp, qp = fixture_path("float"), fixture_path("int8")
    r0 = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))
    keep = frozenset(layer.quant_tensor for layer in r0.layers)
    r = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1, keep_values=keep))
    layer = next(la for la in r.layers if la.metrics.clip_rate == 0.0 and la.quant_tensor in r.kept and la.scale)
    h = activation_histogram(layer, r.kept[layer.quant_tensor])
    quiet = ActivationView._title(layer, h, 0)
    assert "clipped 0.00 %" in quiet and COLOR_CLIP not in quiet
    loud_layer = dataclasses.replace(layer, metrics=dataclasses.replace(layer.metrics, clip_rate=0.05))
    loud = ActivationView._title(loud_layer, h, 0)
    assert f"<span style='color:{COLOR_CLIP}'>clipped" in loud and "5 % of all" in loud


@pytest.mark.parametrize("rate", [0.0, 0.0004])  # below the one clip threshold (0.1 %; it was the audit's 1 %)
def test_small_clip_rates_are_plain(rate):
    assert not clipping_matters(rate)


def test_a_fixed_output_grid_is_never_coloured_as_clipping(qtbot, fixture_path):
    """SOFTMAX's int8 grid (1/256, -128) is the kernel's: values past its end are not a
    calibration range that is too narrow (issue 26 §6), whatever their share."""
    fp, qp = fixture_path("float"), fixture_path("int8")
    r0 = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1))
    soft = next(la for la in r0.layers if la.op_type == "SOFTMAX")
    r = compare_models(str(fp), str(qp), CompareOptions(samples=SampleSettings(count=2), threads=1, keep_values=frozenset({soft.quant_tensor})))
    soft = next(la for la in r.layers if la.op_type == "SOFTMAX")
    h = activation_histogram(soft, r.kept[soft.quant_tensor])
    loud = dataclasses.replace(soft, metrics=dataclasses.replace(soft.metrics, clip_rate=0.05))
    title = ActivationView._title(loud, h, 0)
    assert COLOR_CLIP not in title and "fixed output grid" in title
    assert not clipping_matters(0.05, "SOFTMAX") and clipping_matters(0.05, "CONV_2D")
