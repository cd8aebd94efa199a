"""The one definition of which samples a run uses: count, seed, source and normalization.

`carry_state` (the command line's `--stateful`): a stateful model (LSTM state, resource
variables) is run as one stream: the samples in order, its state carried from one to the next and
reset once at the start, for both models alike; otherwise (the default) every sample starts from
a reset state.

`count` is a number of samples (at least 1) or `ALL` (None): every sample of the file or
folder; random samples have no "all", so `ALL` there means `DEFAULT_COUNT`. This is the one
meaning everywhere: the GUI's count box shows `ALL` as "all" (its 0), the CLI leaves
`--samples` out, sessions store null. `source` None means random samples (seeded per sample).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspector.core.codec.json_record import JsonRecord, json_field
from inspector.core.errors import InputError

DEFAULT_COUNT = 8  # the one default sample count (GUI, CLI, core)
ALL = None  # every sample of the file / folder


@dataclass(frozen=True)
class SampleSettings(JsonRecord):
    count: int | None = DEFAULT_COUNT  # ALL (None): every sample of the file; random: DEFAULT_COUNT
    seed: int = 0  # random samples, and the subset taken from an image folder
    source: str | None = None  # .npy / .npz / image folder; None = random
    normalization: str | None = None  # image folders only, see samples.images
    # streaming: a stateful model's state carried across samples (module doc); written only when
    # set, so sessions and JSON of ordinary runs keep their keys
    carry_state: bool = json_field(default=False, omit_default=True)

    def __post_init__(self) -> None:
        check_count(self.count)

    @property
    def random_count(self) -> int:
        """How many random samples these settings ask for."""
        return DEFAULT_COUNT if self.count is ALL else self.count

    def describe(self) -> str:
        if self.source is None:
            return f"{self.random_count} random samples (seed {self.seed})"
        from pathlib import Path

        return f"{'all' if self.count is ALL else self.count} samples of {Path(self.source).name}"

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SampleSettings:
        """From `to_json`, or the flat keys older sessions saved (samples, seed, inputs, normalization).
        Hand-written: those older forms are migrated, and a count of 0 (the GUI's "all") read as ALL."""
        if "samples" in d or "inputs" in d:
            d = {"count": d.get("samples", DEFAULT_COUNT), "seed": d.get("seed", 0),
                 "source": d.get("inputs"), "normalization": d.get("normalization")}  # fmt: skip
        elif "path" in d:  # schema-1 sessions, migrated: {"source": "npz" | "folder", "path", "count"}
            d = {**d, "source": d["path"]}
        count = d.get("count", DEFAULT_COUNT)
        return cls(
            count=None if count in (None, 0) else int(count),  # 0 was the GUI's "all"
            seed=int(d.get("seed") or 0),
            source=d.get("source") or None,
            normalization=d.get("normalization") or None,
            carry_state=bool(d.get("carry_state", False)),
        )


def check_count(count: int | None, flag: str = "sample count") -> None:
    """The one validation of a sample count: ALL or an integer >= 1."""
    if count is ALL:
        return
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise InputError(f"{flag} must be at least 1, got {count}")
