"""What a comparison runs on, light to import: the command line takes its flag defaults from it
while building its parser (before numpy or LiteRT load), sessions save it, the GUI edits it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.codec.json_record import JsonRecord
from inspector.core.samples.settings import SampleSettings


@dataclass(frozen=True)
class CompareOptions(JsonRecord):
    samples: SampleSettings = SampleSettings()  # count, seed, source, normalization
    runtime: str = "optimized"  # "optimized" | "reference"
    isolated: bool = True  # each layer's own error too (`isolated.py`); the diagnosis needs it
    keep_values: frozenset[int] = field(default_factory=frozenset)  # quant tensor indices
    threads: int = 2  # 1: run everything in the calling thread
    task_kind: str | None = None  # "classification" | "regression" ("other"); None: per output, from the graph
    signature: str | None = None  # signature key to compare (its subgraph); None: subgraph 0
    samples_from: int = 0  # run only the samples from this index on (held-out evaluation, `samples.holdout`)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> CompareOptions:
        """From `to_json`, or the flat form older sessions saved (samples = a count). Hand-written:
        that older form is migrated, and a null read as the default."""
        s = d.get("samples")
        samples = SampleSettings.from_json(s if isinstance(s, dict) else d)
        return cls(
            samples=samples,
            runtime=str(d.get("runtime") or "optimized"),
            isolated=bool(d.get("isolated", True)),
            keep_values=frozenset(int(i) for i in d.get("keep_values") or ()),
            threads=int(d.get("threads") or 2),
            task_kind=d.get("task_kind"),
            signature=d.get("signature"),
            samples_from=int(d.get("samples_from") or 0),
        )
