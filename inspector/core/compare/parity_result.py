"""Result objects of runtime parity (`runtime_parity`), their JSON and the CLI's text table.

JSON (issue 14): {"model", "runtimes", "threads", "samples", "layers": [{"op_index", "op_type",
"tensor_name", "differ_share", "max_lsb", "first_divergence", "spec_mismatch"}], "outputs":
[{"name", "differ_share", "max_lsb"}]}; "spec_mismatch" is null for ops without an integer
reimplementation, else {side label: {"differ_share", "max_lsb"}} of that side against the spec.
Added for sessions (read back by `from_json`): "labels", "samples_are_random", "inputs", and
"tensor_index" in each layer and output.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from inspector.core.codec.json_record import JsonRecord, decode, json_field
from inspector.core.compare.layer_lookup import LayersByOp
from inspector.core.samples.settings import SampleSettings
from inspector.core.text.numbers import number


@dataclass(frozen=True)
class ParityOptions:
    runtimes: tuple[str, str] = ("reference", "optimized")
    threads: tuple[int, int] = (1, 1)
    samples: SampleSettings = field(default_factory=SampleSettings)
    signature: str | None = None  # run this signature's subgraph (None: subgraph 0)

    def labels(self) -> tuple[str, str]:
        """How each side is named: its runtime, with the thread count when that is what differs."""
        if self.runtimes[0] != self.runtimes[1] and self.threads[0] == self.threads[1]:
            return self.runtimes
        return (f"{self.runtimes[0]}@{self.threads[0]}", f"{self.runtimes[1]}@{self.threads[1]}")


@dataclass(frozen=True)
class Difference(JsonRecord):
    differ_share: float  # share of elements that differ
    max_lsb: float | None = json_field(absent=None)  # largest difference in steps of the tensor's scale (None: no scale)


@dataclass(frozen=True)
class LayerParity(JsonRecord):
    op_index: int
    op_type: str
    tensor_name: str
    tensor_index: int = json_field(absent=-1)
    differ_share: float = json_field()
    max_lsb: float | None = json_field(absent=None)
    first_divergence: bool = json_field()
    spec_mismatch: dict[str, Difference] | None = None  # side label -> runtime vs spec integer math

    JSON_KEYS = ("op_index", "op_type", "tensor_name", "differ_share", "max_lsb", "first_divergence", "spec_mismatch", "tensor_index")


@dataclass(frozen=True)
class OutputParity(JsonRecord):
    name: str
    tensor_index: int = json_field(absent=-1)
    differ_share: float = json_field()
    max_lsb: float | None = json_field(absent=None)

    JSON_KEYS = ("name", "differ_share", "max_lsb", "tensor_index")


@dataclass(frozen=True)
class RuntimeParityResult(LayersByOp[LayerParity], JsonRecord):
    model: str
    runtimes: tuple[str, str]
    threads: tuple[int, int]
    samples: int
    layers: tuple[LayerParity, ...]
    outputs: tuple[OutputParity, ...]
    labels: tuple[str, str] = ("a", "b")
    samples_are_random: bool = False
    inputs: str = ""
    signature: str | None = None  # the signature whose subgraph ran (None: subgraph 0)
    subgraph: int = json_field(kw_only=True, absent=0)  # the subgraph the op indices address

    @property
    def first_divergence(self) -> LayerParity | None:
        return next((layer for layer in self.layers if layer.first_divergence), None)

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RuntimeParityResult:
        """From `to_json` (a saved session); KeyError/TypeError/ValueError when it is damaged. The
        labels of a file without them follow from runtimes and threads (`ParityOptions.labels`)."""
        runtimes, threads = tuple(str(r) for r in d["runtimes"]), tuple(int(t) for t in d["threads"])
        if len(runtimes) != 2 or len(threads) != 2:
            raise ValueError("runtimes and threads need two entries each")
        return decode(cls, {**d, "labels": d.get("labels") or ParityOptions(runtimes, threads).labels()})


def parity_table(result: RuntimeParityResult) -> str:
    """The text table `compare-runtimes` prints."""
    a, b = result.labels
    lines = [
        f"{result.model}{f' signature {result.signature!r} (subgraph {result.subgraph})' if result.signature else ''}: "
        f"{a} vs {b}, {result.samples} samples{' (random)' if result.samples_are_random else ''}",
        f"{'op':>4}  {'type':<20} {'differ':>8} {'max LSB':>8}  spec mismatch ({a} / {b})",
    ]
    for layer in result.layers:
        spec = ""
        if layer.spec_mismatch is not None:
            spec = " / ".join(_short(layer.spec_mismatch[k]) for k in (a, b))
        mark = "  <- first divergence" if layer.first_divergence else ""
        lines.append(f"{layer.op_index:>4}  {layer.op_type:<20} {100 * layer.differ_share:>7.2f}% "
                     f"{number(layer.max_lsb, none='n/a'):>8}  {spec}{mark}")  # fmt: skip
    for o in result.outputs:
        lines.append(f"output '{o.name}': {100 * o.differ_share:.2f}% of elements differ, max {number(o.max_lsb, none='n/a')} LSB")
    first = result.first_divergence
    lines.append("no difference between the two runtimes" if first is None else
                 f"first divergence: op {first.op_index} {first.op_type} '{first.tensor_name}'")  # fmt: skip
    return "\n".join(lines)


def _short(d: Difference) -> str:
    return "exact" if d.differ_share == 0 else f"{100 * d.differ_share:.2f}% max {number(d.max_lsb, none='n/a')}"
