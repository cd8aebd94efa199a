"""The values of an op's integer math (what `opmath` computes and `opmath_text` explains)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inspector.core.codec.json_record import JsonRecord


class _Metrics(Protocol):  # read-only members: a frozen dataclass provides them
    @property
    def range_use(self) -> float | None: ...
    @property
    def clip_rate(self) -> float | None: ...
    @property
    def sqnr_db(self) -> float: ...


class _Layer(Protocol):
    @property
    def quant_tensor(self) -> int: ...
    @property
    def metrics(self) -> _Metrics: ...


class ObservedLayers(Protocol):
    """What op math reads of a comparison: a `compare.result.ComparisonResult` (typed here as a
    protocol, since quantmath sits below compare and may not import it)."""

    @property
    def layers(self) -> Sequence[_Layer]: ...


@dataclass(frozen=True)
class TensorQuant:
    role: str  # "input", "weights", "bias", "output", "input 1", ...
    index: int
    name: str
    dtype: str
    shape: tuple[int, ...]
    is_constant: bool
    scales: tuple[float, ...] | None
    zero_points: tuple[int, ...] | None
    quantized_dimension: int | None
    range_lo: tuple[float, ...] | None  # representable float range per channel
    range_hi: tuple[float, ...] | None
    observed: dict[str, Any] | None = None  # range_use / clip_rate / sqnr_db from a comparison run
    # Blockwise weights (scales is then empty): block size, block count and the scales' range.
    block_size: int | None = None
    num_blocks: int | None = None
    block_scale_range: tuple[float, float] | None = None


@dataclass(frozen=True)
class Multiplier:
    name: str
    formula: str
    real: float
    m0: int
    shift: int


@dataclass(frozen=True)
class ConvMath:
    input_scale: float
    input_zero_point: int
    weight_scales: tuple[float, ...]
    weight_zero_points: tuple[int, ...]
    per_channel: bool
    output_scale: float
    output_zero_point: int
    multipliers: tuple[float, ...]  # M[c] = S1*S2[c]/S3
    m0: tuple[int, ...]
    shifts: tuple[int, ...]
    accumulator: str  # "int32" or "int64" (16x8)
    bias_dtype: str | None
    bias_scale_expected: tuple[float, ...]  # S1*S2[c]
    bias_scale_actual: tuple[float, ...] | None
    bias_scale_ratio: tuple[float, ...] | None  # actual / expected
    clamp: tuple[int, int]  # fused activation as a quantized clamp


@dataclass(frozen=True)
class RescaleMath:
    kind: str  # "add_sub", "add_sub_pot", "mul", "requantize", "same_scale", "fixed_output", "quantize", "dequantize"
    left_shift: int | None
    twice_max_input_scale: float | None
    multipliers: tuple[Multiplier, ...]
    pot_shifts: tuple[int, ...] | None  # int16 power-of-two ADD/SUB: input shifts
    clamp: tuple[int, int] | None


@dataclass(frozen=True)
class BlockwiseMath:
    """Blockwise weights of a hybrid op: one scale per block of `block_size` inputs."""

    block_size: int
    input_channels: int
    blocks_per_row: int
    num_blocks: int
    scale_min: float
    scale_max: float
    scale_tensor: str
    zero_points: str  # "0 (symmetric)" or the zero-point tensor's name
    row_scale_min: tuple[float, ...]  # per output channel: smallest / largest block scale
    row_scale_max: tuple[float, ...]
    problem: str | None = None  # parameters that do not fit the tensor (then no scales)


@dataclass(frozen=True)
class HybridMath:
    weight_scales: tuple[float, ...]  # empty for blockwise weights (see `blockwise`)
    weight_zero_points: tuple[int, ...]
    per_channel: bool
    asymmetric_quantize_inputs: bool
    input_dtype: str
    output_dtype: str
    weight_dtype: str = "int8"
    blockwise: BlockwiseMath | None = None


@dataclass(frozen=True)
class OpMath(JsonRecord):
    subgraph: int
    op_index: int
    op_type: str
    kernel_path: str
    kernel_label: str
    tensors: tuple[TensorQuant, ...]
    conv: ConvMath | None
    rescale: RescaleMath | None
    hybrid: HybridMath | None
    explanation: tuple[str, ...]

    def tensor(self, role: str) -> TensorQuant | None:
        return next((t for t in self.tensors if t.role == role), None)



# ------------------------------------------------------------------ tensors
