"""Result objects of runtime parity (`runtime_parity`), their JSON and the CLI's text table.

JSON (issue 14): {"model", "runtimes", "threads", "samples", "layers": [{"op_index", "op_type",
"tensor_name", "differ_share", "max_lsb", "first_divergence", "spec_mismatch"}], "outputs":
[{"name", "differ_share", "max_lsb"}]}; "spec_mismatch" is null for ops without an integer
reimplementation, else {side label: {"differ_share", "max_lsb"}} of that side against the spec.
Added for sessions (read back by `from_json`): "labels", "samples_are_random", "inputs", and
"tensor_index" in each layer and output.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
class Difference:
    differ_share: float  # share of elements that differ
    max_lsb: float | None  # largest difference in steps of the tensor's scale (None: no scale)

    def to_json(self) -> dict:
        return {"differ_share": self.differ_share, "max_lsb": self.max_lsb}

    @classmethod
    def from_json(cls, d: dict) -> Difference:
        return cls(float(d["differ_share"]), _opt_float(d.get("max_lsb")))


@dataclass(frozen=True)
class LayerParity:
    op_index: int
    op_type: str
    tensor_name: str
    tensor_index: int
    differ_share: float
    max_lsb: float | None
    first_divergence: bool
    spec_mismatch: dict[str, Difference] | None = None  # side label -> runtime vs spec integer math

    def to_json(self) -> dict:
        return {
            "op_index": self.op_index,
            "op_type": self.op_type,
            "tensor_name": self.tensor_name,
            "differ_share": self.differ_share,
            "max_lsb": self.max_lsb,
            "first_divergence": self.first_divergence,
            "spec_mismatch": None
            if self.spec_mismatch is None
            else {k: v.to_json() for k, v in self.spec_mismatch.items()},
            "tensor_index": self.tensor_index,
        }

    @classmethod
    def from_json(cls, d: dict) -> LayerParity:
        spec = d.get("spec_mismatch")
        return cls(
            op_index=int(d["op_index"]),
            op_type=str(d["op_type"]),
            tensor_name=str(d["tensor_name"]),
            tensor_index=int(d.get("tensor_index", -1)),
            differ_share=float(d["differ_share"]),
            max_lsb=_opt_float(d.get("max_lsb")),
            first_divergence=bool(d["first_divergence"]),
            spec_mismatch=None if spec is None else {str(k): Difference.from_json(v) for k, v in spec.items()},
        )


@dataclass(frozen=True)
class OutputParity:
    name: str
    tensor_index: int
    differ_share: float
    max_lsb: float | None

    def to_json(self) -> dict:
        return {"name": self.name, "differ_share": self.differ_share, "max_lsb": self.max_lsb, "tensor_index": self.tensor_index}

    @classmethod
    def from_json(cls, d: dict) -> OutputParity:
        return cls(str(d["name"]), int(d.get("tensor_index", -1)), float(d["differ_share"]), _opt_float(d.get("max_lsb")))


@dataclass(frozen=True)
class RuntimeParityResult(LayersByOp[LayerParity]):
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
    subgraph: int = field(kw_only=True)  # the subgraph the op indices address

    @property
    def first_divergence(self) -> LayerParity | None:
        return next((layer for layer in self.layers if layer.first_divergence), None)

    def to_json(self) -> dict:
        return {
            "model": self.model,
            "runtimes": list(self.runtimes),
            "threads": list(self.threads),
            "samples": self.samples,
            "layers": [layer.to_json() for layer in self.layers],
            "outputs": [o.to_json() for o in self.outputs],
            "labels": list(self.labels),
            "samples_are_random": self.samples_are_random,
            "inputs": self.inputs,
            "signature": self.signature,
            "subgraph": self.subgraph,
        }

    @classmethod
    def from_json(cls, d: dict) -> RuntimeParityResult:
        """From `to_json` (a saved session); KeyError/TypeError/ValueError when it is damaged."""
        runtimes, threads = tuple(str(r) for r in d["runtimes"]), tuple(int(t) for t in d["threads"])
        if len(runtimes) != 2 or len(threads) != 2:
            raise ValueError("runtimes and threads need two entries each")
        labels = tuple(str(x) for x in d.get("labels") or ParityOptions(runtimes, threads).labels())
        return cls(
            model=str(d["model"]),
            runtimes=runtimes,
            threads=threads,
            samples=int(d["samples"]),
            layers=tuple(LayerParity.from_json(x) for x in d["layers"]),
            outputs=tuple(OutputParity.from_json(x) for x in d["outputs"]),
            labels=labels,  # type: ignore[arg-type]  # two labels, as runtimes and threads (checked above)
            samples_are_random=bool(d.get("samples_are_random", False)),
            inputs=str(d.get("inputs") or ""),
            signature=None if d.get("signature") is None else str(d["signature"]),
            subgraph=int(d.get("subgraph") or 0),
        )


def _opt_float(v) -> float | None:
    return None if v is None else float(v)


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
