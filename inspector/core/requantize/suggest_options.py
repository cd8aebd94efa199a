"""Suggest's options for both routes, light to import: the command line takes its defaults from
them while it builds its parser, and the GUI builds the same objects, so both use one budget."""

from __future__ import annotations

from dataclasses import dataclass, field

from inspector.core.samples.settings import SampleSettings


@dataclass(frozen=True)
class SuggestOptions:
    samples: SampleSettings = SampleSettings()  # comparison samples (and calibration samples when no `calibration` given)
    treatment: str = "keep_float"  # or "a16w8"
    max_layers: int | None = None
    candidates: int = 6  # worst layers considered
    max_evaluations: int = 24  # requantize+compare runs, all steps together


@dataclass(frozen=True)
class SurgicalSuggestOptions:
    samples: SampleSettings = field(default_factory=SampleSettings)
    candidates: int = 6
    max_steps: int | None = None  # default 8
    max_evaluations: int = 40
    objective: str | None = None  # pattern over B's op outputs; None: the model outputs
    # what Suggest may do; weight_mse and equalize only where the diagnosis proposes them; relu6_equalize (DFQ's
    # ReLU6 -> ReLU, a change of the float function, measured and refused where it matters) in the DFQ chain only
    edits: tuple[str, ...] = ("keep_float", "recalibrate", "per_channel", "bias_correct", "a16w8", "weight_mse", "equalize", "input_range",
                              "relu6_equalize")
    runtime: str = "optimized"
    signature: str | None = None  # rank and edit this signature's subgraph (None: subgraph 0)
