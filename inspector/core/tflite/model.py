"""Read a .tflite file into immutable dataclasses.

The file is memory-mapped and parsed with the `tflite` flatbuffer package; tensor data are
numpy views over the map (zero copy), so opening a large model costs time in the number of
tensors and ops, not in its size in bytes.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import flatbuffers
import numpy as np
import tflite
from ai_edge_litert import schema_py_generated as schema

from inspector.core.errors import ModelFormatError
from inspector.core.progress import paced
from inspector.core.tflite.dtypes import PACKED_INT_TYPES, TYPE_NAMES, numpy_dtype_name
from inspector.core.tflite.litertlm import map_range
from inspector.core.tflite.op_options import op_options
from inspector.core.tflite.validate import validate_flatbuffer

_NO_NUMPY_VIEW = frozenset({"string", "resource", "variant", "bfloat16", "float8_e4m3fn", "float8_e5m2"})
_BUILTIN_NAMES = {v: k for k, v in vars(tflite.BuiltinOperator).items() if not k.startswith("_")}


@dataclass(frozen=True, slots=True)
class Blockwise:
    """The schema's BlockwiseQuantization details: one scale per block of `block_size` inputs.

    The scales (and zero points, when present) live in other tensors of the same subgraph:
    for a [out, in] weight, a scale tensor of shape [out, in / block_size]. A zero-point tensor
    index of -1 means none (symmetric blocks, Z = 0), as litert-quantizer writes them.
    """

    block_size: int
    scale_tensor: int
    zero_point_tensor: int = -1

    def to_json(self) -> dict[str, Any]:
        return {
            "block_size": self.block_size,
            "scale_tensor": self.scale_tensor,
            "zero_point_tensor": None if self.zero_point_tensor < 0 else self.zero_point_tensor,
        }


@dataclass(frozen=True, slots=True)
class Quantization:
    """Affine quantization r = scale * (q - zero_point), per tensor or per channel.

    Blockwise tensors carry no scales here (`scales` is empty): their per-block scales are
    the values of the tensor `blockwise.scale_tensor` (see `Model.blockwise_params`).
    """

    scales: tuple[float, ...]
    zero_points: tuple[int, ...]
    quantized_dimension: int = 0
    blockwise: Blockwise | None = None

    @property
    def per_channel(self) -> bool:
        return len(self.scales) > 1

    @property
    def is_blockwise(self) -> bool:
        return self.blockwise is not None

    @property
    def num_channels(self) -> int:
        return len(self.scales)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "scales": list(self.scales),
            "zero_points": list(self.zero_points),
            "quantized_dimension": self.quantized_dimension,
        }
        if self.blockwise is not None:
            out["blockwise"] = self.blockwise.to_json()
        return out


@dataclass(frozen=True, slots=True)
class Sparsity:
    """Sparse tensor layout (values behind DENSIFY); data holds only the stored values."""

    traversal_order: tuple[int, ...]
    block_map: tuple[int, ...]
    num_dims: int


@dataclass(frozen=True, slots=True)
class Tensor:
    subgraph: int
    index: int
    name: str
    dtype: str  # numpy name ("int8", "float32", ...) or "int4", "string", "resource", ...
    shape: tuple[int, ...]
    shape_signature: tuple[int, ...]
    buffer: int
    buffer_size: int  # bytes of constant data, 0 for activations
    is_variable: bool
    quantization: Quantization | None
    sparsity: Sparsity | None = None
    # Calibration min/max recorded in the file, if any (rare: leftover from conversion).
    min_max: tuple[tuple[float, ...], tuple[float, ...]] | None = None

    @property
    def is_constant(self) -> bool:
        return self.buffer_size > 0

    @property
    def is_quantized(self) -> bool:
        return self.quantization is not None

    @property
    def is_dynamic(self) -> bool:
        return any(d < 0 for d in self.shape_signature)

    @property
    def num_elements(self) -> int:
        return int(math.prod(int(d) for d in self.shape)) if self.shape else 1  # math.prod: 10x np.prod on a short tuple


@dataclass(frozen=True, slots=True)
class Op:
    subgraph: int
    index: int  # position in execution order within its subgraph
    type: str  # builtin name ("CONV_2D") or custom code
    is_custom: bool
    version: int
    inputs: tuple[int, ...]  # -1 marks an omitted optional input
    outputs: tuple[int, ...]
    intermediates: tuple[int, ...]
    options: dict[str, Any] = field(hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class Signature:
    key: str
    subgraph: int
    inputs: dict[str, int] = field(hash=False)
    outputs: dict[str, int] = field(hash=False)


@dataclass(frozen=True, slots=True)
class Subgraph:
    index: int
    name: str
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    tensors: tuple[Tensor, ...]
    ops: tuple[Op, ...]
    # `producers()` made once (a 1,458-op model asked for it 6,800 times in one pair check)
    _producers: dict[int, Op] = field(default_factory=dict, init=False, hash=False, compare=False, repr=False)
    _consumers: dict[int, tuple[Op, ...]] = field(default_factory=dict, init=False, hash=False, compare=False, repr=False)

    def tensor_by_name(self, name: str) -> Tensor | None:
        for t in self.tensors:
            if t.name == name:
                return t
        return None

    def producers(self) -> Mapping[int, Op]:
        """Tensor index -> op that writes it: a read-only view of one map made once (it was a
        copy per call: 8,000 copies of 3,000 entries in one pair check of a 1,500-op model)."""
        if not self._producers and self.ops:
            self._producers.update({o: op for op in self.ops for o in op.outputs if o >= 0})
        return MappingProxyType(self._producers)

    def consumers(self) -> dict[int, list[Op]]:
        """Tensor index -> ops that read it, in op order (new lists each call, copied from one
        map made once: the plan editor asks it per row on a 1,500-op model)."""
        if not self._consumers and self.ops:
            out: dict[int, list[Op]] = {}
            for op in self.ops:
                for i in op.inputs:
                    if i >= 0:
                        out.setdefault(i, []).append(op)
            self._consumers.update({k: tuple(v) for k, v in out.items()})
        return {k: list(v) for k, v in self._consumers.items()}

    def readers(self, tensor: int) -> tuple[Op, ...]:
        """The ops that read `tensor`, in op order (`consumers` of one tensor, without copying the map)."""
        if not self._consumers:
            self.consumers()
        return self._consumers.get(tensor, ())


class Model:
    """An opened .tflite file. Keep it alive while tensor views are in use (they map the file)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = str(path)  # a file, or a bundle's section 'X.litertlm#N' (see litertlm)
        self._mm, offset, self.size_bytes, self.file = map_range(path)
        # The model's bytes: the whole map, or a section of a bundle (a view: zero copy).
        self._buf = self._mm if offset == 0 and self.size_bytes == len(self._mm) else memoryview(self._mm)[offset : offset + self.size_bytes]
        # Inconsistencies the runtime accepts (dangling metadata references): the audit shows them.
        self.format_warnings: tuple[str, ...] = tuple(validate_flatbuffer(self._buf, self.path))
        try:
            self._fb = tflite.Model.GetRootAs(self._buf, 0)
            self._parse()
        except ModelFormatError:
            raise
        except Exception as e:  # flatbuffer accessors raise struct/index errors on bad offsets
            raise ModelFormatError(f"malformed TFLite flatbuffer ({type(e).__name__}: {e})", self.path) from e

    # ------------------------------------------------------------------ parsing
    def _parse(self) -> None:
        fb = self._fb
        self.version = fb.Version()
        self.description = (fb.Description() or b"").decode("utf-8", "replace")
        codes = []
        for i in range(fb.OperatorCodesLength()):
            oc = fb.OperatorCodes(i)
            code = max(_builtin_code_field(oc), oc.DeprecatedBuiltinCode())
            if code == tflite.BuiltinOperator.CUSTOM:
                name = (oc.CustomCode() or b"").decode("utf-8", "replace") or "CUSTOM"
                codes.append((name, True, oc.Version()))
            else:
                codes.append((_BUILTIN_NAMES.get(code, f"BUILTIN_{code}"), False, oc.Version()))
        self._codes = codes
        self._buffer_sizes = [self._buffer_extent(i)[1] for i in range(fb.BuffersLength())]
        self.subgraphs: tuple[Subgraph, ...] = tuple(
            self._parse_subgraph(i) for i in range(fb.SubgraphsLength())
        )
        self.signatures: tuple[Signature, ...] = tuple(
            self._parse_signature(fb.SignatureDefs(i)) for i in range(fb.SignatureDefsLength())
        )
        self.metadata: dict[str, int] = {}  # entries naming an existing buffer (others: format_warnings)
        for i in range(fb.MetadataLength()):
            md = fb.Metadata(i)
            if md.Buffer() < len(self._buffer_sizes):
                self.metadata[(md.Name() or b"").decode("utf-8", "replace")] = md.Buffer()

    def _buffer_extent(self, index: int) -> tuple[int, int]:
        """(file offset, size) of a buffer's data; (0, 0) when it has none."""
        buf = self._fb.Buffers(index)
        off = buf.Offset()
        if off > 1:  # data stored after the flatbuffer (models > 2 GB)
            return off, buf.Size()
        n = buf.DataLength()
        if n == 0:
            return 0, 0
        o = buf._tab.Offset(4)
        start = buf._tab.Vector(o)
        return start, n

    def _parse_subgraph(self, si: int) -> Subgraph:
        sg = self._fb.Subgraphs(si)
        tensors = tuple(self._parse_tensor(si, i, sg.Tensors(i)) for i in paced(range(sg.TensorsLength())))
        ops = []
        for i in paced(range(sg.OperatorsLength())):
            op = sg.Operators(i)
            ci = op.OpcodeIndex()
            if not 0 <= ci < len(self._codes):
                raise ModelFormatError(f"op {i} of subgraph {si} names opcode {ci}, which does not exist", self.path)
            name, custom, ver = self._codes[ci]
            ops.append(
                Op(
                    subgraph=si,
                    index=i,
                    type=name,
                    is_custom=custom,
                    version=ver,
                    inputs=tuple(int(x) for x in _ints(op.InputsAsNumpy())),
                    outputs=tuple(int(x) for x in _ints(op.OutputsAsNumpy())),
                    intermediates=tuple(int(x) for x in _ints(op.IntermediatesAsNumpy())),
                    options=op_options(op),
                )
            )
        return Subgraph(
            index=si,
            name=(sg.Name() or b"").decode("utf-8", "replace"),
            inputs=tuple(int(x) for x in _ints(sg.InputsAsNumpy())),
            outputs=tuple(int(x) for x in _ints(sg.OutputsAsNumpy())),
            tensors=tensors,
            ops=tuple(ops),
        )

    def _parse_tensor(self, si: int, ti: int, t: tflite.Tensor) -> Tensor:
        ttype = t.Type()
        q = t.Quantization()
        quant = None
        min_max = None
        if q is not None:
            scales = _floats(q.ScaleAsNumpy())
            blockwise = _blockwise_details(q)
            if blockwise is not None:
                quant = Quantization((), (), int(q.QuantizedDimension()), blockwise)
            elif scales:
                zps = _ints(q.ZeroPointAsNumpy())
                if len(zps) < len(scales):  # zero_point omitted means 0
                    zps = list(zps) + [0] * (len(scales) - len(zps))
                quant = Quantization(tuple(scales), tuple(int(z) for z in zps), int(q.QuantizedDimension()))
            mins, maxs = _floats(q.MinAsNumpy()), _floats(q.MaxAsNumpy())
            if mins and maxs:
                min_max = (tuple(mins), tuple(maxs))
        sp = t.Sparsity()
        sparsity = None
        if sp is not None:
            sparsity = Sparsity(
                traversal_order=tuple(int(x) for x in _ints(sp.TraversalOrderAsNumpy())),
                block_map=tuple(int(x) for x in _ints(sp.BlockMapAsNumpy())),
                num_dims=int(sp.DimMetadataLength()),
            )
        shape = tuple(int(x) for x in _ints(t.ShapeAsNumpy()))
        sig = tuple(int(x) for x in _ints(t.ShapeSignatureAsNumpy())) or shape
        b = t.Buffer()
        if not 0 <= b < len(self._buffer_sizes):
            raise ModelFormatError(f"tensor {ti} of subgraph {si} names buffer {b}, which does not exist", self.path)
        return Tensor(
            subgraph=si,
            index=ti,
            name=(t.Name() or b"").decode("utf-8", "replace"),
            dtype=numpy_dtype_name(ttype),
            shape=shape,
            shape_signature=sig,
            buffer=b,
            buffer_size=self._buffer_sizes[b],
            is_variable=bool(t.IsVariable()),
            quantization=quant,
            sparsity=sparsity,
            min_max=min_max,
        )

    def _parse_signature(self, s: tflite.SignatureDef) -> Signature:
        def tmap(n: int, get: Callable[[int], Any]) -> dict[str, int]:
            return {(get(i).Name() or b"").decode("utf-8", "replace"): int(get(i).TensorIndex()) for i in range(n)}

        return Signature(
            key=(s.SignatureKey() or b"").decode("utf-8", "replace"),
            subgraph=int(s.SubgraphIndex()),
            inputs=tmap(s.InputsLength(), s.Inputs),
            outputs=tmap(s.OutputsLength(), s.Outputs),
        )

    # ------------------------------------------------------------------ data access
    _main_index = 0  # the subgraph `main` stands for (a signature's, see `for_signature`)
    signature_key: str | None = None

    @property
    def main(self) -> Subgraph:
        """The subgraph compared and run: 0, or the chosen signature's."""
        return self.subgraphs[self._main_index]

    def for_signature(self, key: str) -> Model:
        """This model seen through signature `key`: `main` is that signature's subgraph.

        Shares the map and the parsed tables (no copy). Unknown keys raise KeyError.
        """
        sig = next((s for s in self.signatures if s.key == key), None)
        if sig is None:
            raise KeyError(key)
        if not 0 <= sig.subgraph < len(self.subgraphs):
            raise ModelFormatError(f"signature '{key}' names subgraph {sig.subgraph}, which does not exist", self.path)
        view = copy.copy(self)
        view._main_index = sig.subgraph
        view.signature_key = key
        return view

    def tensor(self, index: int, subgraph: int | None = None) -> Tensor:
        return self.subgraphs[self._main_index if subgraph is None else subgraph].tensors[index]

    def buffer_bytes(self, buffer: int) -> np.ndarray:
        """Raw bytes of a buffer as a uint8 view over the mapped file (no copy)."""
        start, size = self._buffer_extent(buffer)
        if size == 0:
            return np.empty(0, np.uint8)
        if start + size > self.size_bytes:
            raise ModelFormatError(f"buffer {buffer} runs past the end of the file", self.path)
        return np.frombuffer(self._buf, dtype=np.uint8, count=size, offset=start)

    def tensor_data(self, tensor: Tensor) -> np.ndarray | None:
        """Stored values of a constant tensor, shaped like the tensor.

        A view over the file except for int4 / uint4 / int2 (unpacked to int8 / uint8, low bits first)
        and sparse tensors (returned flat: only the stored values).
        """
        if not tensor.is_constant or tensor.dtype in _NO_NUMPY_VIEW:
            return None  # no numpy view for these types
        raw = self.buffer_bytes(tensor.buffer)
        if tensor.dtype in PACKED_INT_TYPES:
            vals = _unpack_bits(raw, *PACKED_INT_TYPES[tensor.dtype])
            n = tensor.num_elements if tensor.sparsity is None else vals.size
            return vals[:n].reshape(tensor.shape if tensor.sparsity is None else (n,))
        dt = np.dtype(tensor.dtype)
        if raw.size % dt.itemsize:
            raise ModelFormatError(
                f"tensor '{tensor.name}' has {raw.size} bytes, not a whole number of {tensor.dtype}", self.path
            )
        arr = raw.view(dt)
        if tensor.sparsity is not None:
            return arr
        if arr.size != tensor.num_elements:
            raise ModelFormatError(
                f"tensor '{tensor.name}' has shape {list(tensor.shape)} ({tensor.num_elements} values) "
                f"but its buffer holds {arr.size}",
                self.path,
            )
        return arr.reshape(tensor.shape)

    def metadata_bytes(self, name: str) -> bytes | None:
        b = self.metadata.get(name)
        return None if b is None else self.buffer_bytes(b).tobytes()

    def op_code_names(self) -> list[str]:
        return [c[0] for c in self._codes]

    def close(self) -> None:
        try:
            if isinstance(self._buf, memoryview):
                self._buf.release()
            self._mm.close()
        except BufferError:  # views still alive; the map closes when they go
            pass

    def __repr__(self) -> str:
        return f"Model({self.path!r}, {len(self.subgraphs)} subgraphs)"


def load_model(path: str | os.PathLike[str]) -> Model:
    return Model(path)


def _blockwise_details(q: tflite.QuantizationParameters) -> Blockwise | None:
    """The BlockwiseQuantization details of a tensor, if it has them.

    The `tflite` package's schema predates the union member, so its table is read with the
    LiteRT schema (the union type is checked before its table is touched).
    """
    if q.DetailsType() != schema.QuantizationDetails.BlockwiseQuantization:
        return None
    table = q.Details()
    if table is None:
        return None
    bw = schema.BlockwiseQuantization()
    bw.Init(table.Bytes, table.Pos)
    return Blockwise(int(bw.BlockSize()), int(bw.Scales()), int(bw.ZeroPoints()))


def _builtin_code_field(oc: tflite.OperatorCode) -> int:
    """The int32 `builtin_code` field as stored.

    The `tflite` package's BuiltinCode() returns the legacy int8 field for codes < 127; tools
    that leave that legacy field at 0 (litert-quantizer does) would then read as ADD. The
    runtime takes max(builtin_code, deprecated_builtin_code); so do we.
    """
    o = oc._tab.Offset(10)
    return oc._tab.Get(flatbuffers.number_types.Int32Flags, o + oc._tab.Pos) if o else 0


def _ints(a: int | np.ndarray) -> list[int] | np.ndarray:  # the accessors give 0 for an absent vector
    return [] if isinstance(a, int) else a


def _floats(a: int | np.ndarray) -> list[float]:
    return [] if isinstance(a, int) else [float(x) for x in a]


def _unpack_bits(raw: np.ndarray, bits: int, signed: bool) -> np.ndarray:
    """Sub-byte values, `8 // bits` per byte, low bits first; int8 when signed, else uint8."""
    per = 8 // bits
    mask = (1 << bits) - 1
    out = np.empty((raw.size, per), np.uint8)
    for k in range(per):
        out[:, k] = (raw >> (k * bits)) & mask
    if not signed:
        return out.reshape(-1)
    vals = out.reshape(-1).astype(np.int8)
    return np.where(vals >= 1 << (bits - 1), vals - (1 << bits), vals).astype(np.int8)


__all__ = ["Blockwise", "Model", "Op", "Quantization", "Signature", "Sparsity", "Subgraph", "Tensor", "TYPE_NAMES", "load_model"]
