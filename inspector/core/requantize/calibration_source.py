"""What an edit calibrates on, said before it acts (issue 26 §9): Apply fix, Suggest and the
requantize runs re-calibrate on the pair's samples, and when no inputs were chosen those are
random noise: ranges fit to noise, and a gain measured on more of the same noise. The CLI
prints `random_calibration_warning` on stderr and writes `calibration_json` in its JSON; the
GUI asks with the same text and offers to choose inputs."""

from __future__ import annotations

from typing import Any

from inspector.core.samples.settings import SampleSettings


def is_random(settings: SampleSettings) -> bool:
    return settings.source is None


def calibration_json(settings: SampleSettings, calibrates: bool = True) -> dict[str, Any]:
    """{"source": "random" | "inputs", "inputs", "samples", "seed", "description", "calibrates"}."""
    random = is_random(settings)
    return {
        "source": "random" if random else "inputs",
        "inputs": settings.source,
        "samples": settings.random_count if random else settings.count,
        "seed": settings.seed,
        "description": settings.describe(),
        "calibrates": calibrates,
    }


def random_calibration_note(settings: SampleSettings) -> str | None:
    """Why calibrating on these samples is a guess (None when inputs were chosen)."""
    if not is_random(settings):
        return None
    return (f"{settings.describe()}: no inputs were chosen, so the new ranges fit random noise, not your data, "
            "and the gain is measured on more of the same noise")  # fmt: skip


def random_calibration_warning(settings: SampleSettings, command: str) -> str | None:
    """The CLI's stderr line (None when inputs were chosen)."""
    note = random_calibration_note(settings)
    return None if note is None else f"tflite-inspector {command}: WARNING: calibrating on {note}; give --inputs FILE|FOLDER"


def with_calibration_source(d: dict[str, Any], settings: SampleSettings, calibrates: bool = True) -> dict[str, Any]:
    """`d` (a result's JSON) with where its calibration samples came from added to its
    "calibration" object: the keys the result already has there (the held-out split, the
    quantizer's seeding) stay as they are; "source", "inputs", "description"... are added."""
    return {**d, "calibration": {**calibration_json(settings, calibrates), **(d.get("calibration") or {})}}
