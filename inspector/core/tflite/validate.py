"""Structural checks of a TFLite flatbuffer before the parser or the runtime trusts it.

`validate_flatbuffer` walks the part of the schema the app and the runtime read (Model,
OperatorCode, SubGraph, Tensor, QuantizationParameters, SparsityParameters, Operator,
Buffer, SignatureDef, Metadata) with bounds-checked reads, then checks what refers to what:
tensor, buffer, opcode and subgraph indexes, shapes against buffer sizes, control-flow
references and their cycles. Any problem is a `ModelFormatError` naming the file and the
object, e.g. "op 5 of subgraph 0 reads tensor 812 but the subgraph has 40 tensors".
What the interpreter accepts is not refused: a metadata reference to a missing buffer (the
runtime never follows it to run the model) is returned as a warning for the audit and `info`.
The walk is bounded by the schema (no recursion through the file), so it cannot hang.
"""

from __future__ import annotations

import numpy as np
import tflite

from inspector.core.errors import ModelFormatError
from inspector.core.progress import paced
from inspector.core.tflite.dtypes import TYPE_NAMES
from inspector.core.tflite.validate_sparse import DimMeta, sparse_value_count
from inspector.core.tflite.verifier import Buffer, Reader, Table, Trace

MAGIC = b"TFL3"

# Limits beyond any real model; they keep a hostile file from making the parser loop for hours.
MAX_SUBGRAPHS = 10_000
MAX_TENSORS = 1_000_000  # per subgraph
MAX_OPS = 1_000_000  # per subgraph
MAX_BUFFERS = 2_000_000
MAX_RANK = 16
MAX_TENSOR_BYTES = 1 << 40  # 1 TiB: anything larger is a corrupt shape
MAX_CALL_DEPTH = 32

_ITEM_SIZE = {
    "FLOAT32": 4, "FLOAT16": 2, "FLOAT64": 8, "INT32": 4, "UINT8": 1, "INT64": 8, "BOOL": 1,
    "INT16": 2, "COMPLEX64": 8, "COMPLEX128": 16, "INT8": 1, "UINT64": 8, "UINT32": 4,
    "UINT16": 2, "BFLOAT16": 2,
}
_PACKED = {"INT4": 2, "UINT4": 2, "INT2": 4}  # sub-byte types: values per byte
_CONTROL_FLOW = {  # builtin code -> (options type, [(slot, field name)])
    tflite.BuiltinOperator.WHILE: (tflite.BuiltinOptions.WhileOptions, [(0, "cond_subgraph_index"), (1, "body_subgraph_index")]),
    tflite.BuiltinOperator.IF: (tflite.BuiltinOptions.IfOptions, [(0, "then_subgraph_index"), (1, "else_subgraph_index")]),
    tflite.BuiltinOperator.CALL_ONCE: (tflite.BuiltinOptions.CallOnceOptions, [(0, "init_subgraph_index")]),
}
# QuantizationDetails union members (schema.fbs; the `tflite` package knows only the first).
_CUSTOM_QUANTIZATION, _BLOCKWISE_QUANTIZATION, _MULTI_AXIS_QUANTIZATION = 1, 2, 3
_CF_NAMES = {tflite.BuiltinOperator.WHILE: "WHILE", tflite.BuiltinOperator.IF: "IF", tflite.BuiltinOperator.CALL_ONCE: "CALL_ONCE"}


def check_header(buf: Buffer, path: str) -> None:
    n = len(buf)
    if n < 8:
        raise ModelFormatError(f"the file is {n} bytes long, too short to be a TFLite model", path)
    if bytes(buf[4:8]) != MAGIC:
        raise ModelFormatError(
            f"not a TFLite model: expected the identifier 'TFL3' at byte 4, found {bytes(buf[4:8])!r}", path
        )
    root = int.from_bytes(bytes(buf[0:4]), "little")
    if root + 4 > n:
        raise ModelFormatError(f"the root table offset ({root}) points past the end of the file ({n} bytes): truncated?", path)


def validate_flatbuffer(buf: Buffer, path: str, trace: Trace | None = None) -> list[str]:
    """Raise ModelFormatError unless `buf` is a structurally sound TFLite model; return the
    inconsistencies the runtime accepts (dangling metadata references), one sentence each.

    `trace(kind, pos)` (optional) sees every offset and vector length read; the fuzz tests
    use it to aim mutations at the structure rather than at weight bytes.
    """
    check_header(buf, path)
    check = _ModelCheck(Reader(buf, path, trace))
    check.run()
    return check.warnings


class _ModelCheck:
    def __init__(self, r: Reader) -> None:
        self.r = r
        self.warnings: list[str] = []  # inconsistencies the runtime accepts

    def fail(self, message: str) -> ModelFormatError:
        return self.r.fail(message)

    def run(self) -> None:
        m = self.r.root()
        self.codes = self._opcodes(m)
        self.buffer_sizes = self._buffers(m)
        m.string(3, "description")
        subgraphs = m.tables(2, "subgraphs", "subgraph", MAX_SUBGRAPHS)
        if not subgraphs:
            raise self.fail("the model has no subgraphs")
        self.num_subgraphs = len(subgraphs)
        self.tensor_counts: list[int] = []
        self.calls: dict[int, list[tuple[int, int, str]]] = {}
        for si, sg in enumerate(subgraphs):
            self._subgraph(si, sg)
        self._check_cycles()
        # Metadata references the runtime never follows to run the model: a dangling one is a
        # warning (the interpreter runs such files, e.g. quantizer outputs), not a refusal.
        for i, b in enumerate(m.array(5, "i", "metadata_buffer")):
            self._metadata_ref(int(b), f"metadata_buffer entry {i}")
        for i, md in enumerate(m.tables(6, "metadata", "metadata entry")):
            name = md.string(0, "name")
            label = f"metadata entry {i}" + (f" ('{name.decode('utf-8', 'replace')}')" if name else "")
            self._metadata_ref(md.scalar(1, "I", "buffer"), label)
        for i, sd in enumerate(m.tables(7, "signature_defs", "signature")):
            self._signature(i, sd)

    # ------------------------------------------------------------------ model-level tables
    def _opcodes(self, m: Table) -> list[int]:
        codes = []
        for i, oc in enumerate(m.tables(1, "operator_codes", "operator code")):
            dep = oc.scalar(0, "b", "deprecated_builtin_code")
            code = max(dep, oc.scalar(3, "i", "builtin_code"))
            if code < 0:
                raise self.fail(f"operator code {i} has a negative builtin code ({code})")
            oc.string(1, "custom_code")
            codes.append(code)
        return codes

    def _buffers(self, m: Table) -> list[int]:
        sizes = []
        for i, b in enumerate(m.tables(4, "buffers", "buffer", MAX_BUFFERS)):
            start, n = b.vector(0, 1, "data")
            off, size = b.scalar(1, "Q", "offset"), b.scalar(2, "Q", "size")
            if off > 1:  # data stored after the flatbuffer (the > 2 GB layout)
                if off + size > self.r.n:
                    raise self.fail(
                        f"buffer {i} points to bytes {off}..{off + size} but the file has {self.r.n} bytes: truncated or corrupt"
                    )
                n = size
            sizes.append(n)
        return sizes

    def _metadata_ref(self, b: int, what: str) -> None:
        if not 0 <= b < len(self.buffer_sizes):
            self.warnings.append(f"{what} names buffer {b}, but the model has {len(self.buffer_sizes)} buffers (ignored)")

    def _buffer_ref(self, b: int, what: str) -> None:
        if not 0 <= b < len(self.buffer_sizes):
            raise self.fail(f"{what} names buffer {b}, but the model has {len(self.buffer_sizes)} buffers")

    def _signature(self, i: int, sd: Table) -> None:
        key = sd.string(2, "signature_key")
        label = f"signature {i}" + (f" ('{key.decode('utf-8', 'replace')}')" if key else "")
        si = sd.scalar(4, "I", "subgraph_index")
        if si >= self.num_subgraphs:
            raise self.fail(f"{label} names subgraph {si}, but the model has {self.num_subgraphs}")
        n = self.tensor_counts[si]
        for slot, side in ((0, "input"), (1, "output")):
            for j, tm in enumerate(sd.tables(slot, f"{side}s", f"{label} {side}")):
                tm.string(0, "name")
                ti = tm.scalar(1, "I", "tensor_index")
                if ti >= n:
                    raise self.fail(f"{label} {side} {j} names tensor {ti}, but subgraph {si} has {n} tensors")

    # ------------------------------------------------------------------ subgraphs
    def _subgraph(self, si: int, sg: Table) -> None:
        where = f"subgraph {si}"
        tensors = sg.tables(0, "tensors", f"{where}, tensor", MAX_TENSORS)
        n = len(tensors)
        self.tensor_counts.append(n)
        for ti, t in paced(enumerate(tensors)):
            self._tensor(si, ti, t)
        for slot, side in ((1, "inputs"), (2, "outputs")):
            idx = sg.array(slot, "i", side)
            bad = idx[(idx < 0) | (idx >= n)]
            if bad.size:
                raise self.fail(f"{where} lists tensor {int(bad[0])} among its {side}, but it has {n} tensors")
        sg.string(4, "name")
        for oi, op in paced(enumerate(sg.tables(3, "operators", f"{where}, op", MAX_OPS))):
            self._op(si, oi, op, n)

    def _tensor(self, si: int, ti: int, t: Table) -> None:
        where = f"tensor {ti} of subgraph {si}"
        ttype = t.scalar(1, "b", "type")
        tname = TYPE_NAMES.get(ttype)
        if tname is None:
            raise self.fail(f"{where} has type {ttype}, which is not a TFLite tensor type")
        shape = t.array(0, "i", "shape", MAX_RANK * 64)
        if shape.size > MAX_RANK:
            raise self.fail(f"{where} has rank {shape.size}, more than {MAX_RANK}")
        if (shape < 0).any():
            raise self.fail(f"{where} has a negative dimension in its shape {shape.tolist()}")
        sig = t.array(7, "i", "shape_signature", MAX_RANK * 64)
        if sig.size and (sig.size != shape.size or (sig < -1).any()):
            raise self.fail(f"{where}: shape signature {sig.tolist()} does not fit its shape {shape.tolist()}")
        count = 1
        for d in shape.tolist():
            count *= d
        item = _ITEM_SIZE.get(tname, 1)
        if count * item > MAX_TENSOR_BYTES:
            raise self.fail(f"{where} has shape {shape.tolist()}: {count} values is beyond any real model (corrupt shape)")
        b = t.scalar(2, "I", "buffer")
        self._buffer_ref(b, where)
        t.string(3, "name")
        sparse = self._sparsity(where, t, shape)
        self._quantization(where, t, shape)
        for j, v in enumerate(t.tables(9, "variant_tensors", f"{where}, variant")):
            v.array(0, "i", f"variant {j} shape", MAX_RANK * 64)
        size = self.buffer_sizes[b]
        if sparse is not None and tname in _ITEM_SIZE and size != sparse * item:
            raise self.fail(f"{where} is sparse with {sparse} stored values ({sparse * item} bytes) but buffer {b} holds {size} bytes")
        if size and tname in _ITEM_SIZE:
            if sparse is None and size != count * item:
                raise self.fail(
                    f"{where} has shape {shape.tolist()} ({count} {tname.lower()} values, {count * item} bytes) "
                    f"but buffer {b} holds {size} bytes"
                )
        elif size and tname in _PACKED and sparse is None and size * _PACKED[tname] < count:
            raise self.fail(f"{where} has {count} {tname.lower()} values but buffer {b} holds only {size} bytes")

    def _quantization(self, where: str, t: Table, shape: np.ndarray) -> None:
        q = t.table(4, "quantization")
        if q is None:
            return
        q.array(0, "f", "min")
        q.array(1, "f", "max")
        scales = q.array(2, "f", "scale")
        zps = q.array(3, "q", "zero_point")
        self._details(where, q)
        if scales.size == 0:
            return
        bad = scales[~np.isfinite(scales) | (scales < 0)]
        if bad.size:
            raise self.fail(f"{where} has an invalid quantization scale ({float(bad[0])})")
        if zps.size > scales.size:
            raise self.fail(f"{where} has {scales.size} scales but {zps.size} zero points")
        qdim = q.scalar(6, "i", "quantized_dimension")
        if scales.size > 1:
            if not 0 <= qdim < shape.size:
                raise self.fail(f"{where} is quantized along dimension {qdim} but has rank {shape.size}")
            if int(shape[qdim]) != scales.size:
                raise self.fail(
                    f"{where} has {scales.size} per-channel scales but dimension {qdim} of its shape "
                    f"{shape.tolist()} has {int(shape[qdim])} channels"
                )

    def _details(self, where: str, q: Table) -> None:
        """The quantization details union: its type decides how its table is read.

        CustomQuantization holds a byte vector; BlockwiseQuantization (and MultiAxisQuantization)
        hold scalars naming other tensors of the subgraph, which must exist.
        """
        kind = q.scalar(4, "B", "details_type")
        d = q.table(5, "details") if kind else None
        if d is None:
            return
        if kind == _CUSTOM_QUANTIZATION:
            d.array(0, "B", "custom")
        elif kind in (_BLOCKWISE_QUANTIZATION, _MULTI_AXIS_QUANTIZATION):
            name = "blockwise" if kind == _BLOCKWISE_QUANTIZATION else "multi-axis"
            block = d.scalar(2, "i", "block_size")
            if block <= 0:
                raise self.fail(f"{where} has {name} quantization with block size {block}")
            n = self.tensor_counts[-1]
            for slot, field, optional in ((0, "scales", False), (1, "zero_points", True)):
                ti = d.scalar(slot, "i", field)  # schema default 0
                if (optional and ti == -1) or 0 <= ti < n:
                    continue
                raise self.fail(f"{where} has {name} quantization whose {field} tensor is {ti}, but the subgraph has {n} tensors")
            d.array(3, "i", "block_shape" if kind == _BLOCKWISE_QUANTIZATION else "quantized_dimensions", MAX_RANK)
        # other (future) union members: their table is not read

    def _sparsity(self, where: str, t: Table, shape: np.ndarray) -> int | None:
        """Number of stored values of a sparse tensor (None when dense)."""
        sp = t.table(6, "sparsity")
        if sp is None:
            return None
        traversal = sp.array(0, "i", "traversal_order", MAX_RANK * 2)
        block_map = sp.array(1, "i", "block_map", MAX_RANK)
        dims = []
        for j, dm in enumerate(sp.tables(2, "dim_metadata", f"{where}, sparse dimension", MAX_RANK * 2)):
            arrays = []
            for type_slot, slot in ((2, 3), (4, 5)):
                kind = dm.scalar(type_slot, "B", "index vector type")
                vec = dm.table(slot, "index vector")
                if vec is not None and kind not in (1, 2, 3):
                    raise self.fail(f"{where}: sparse dimension {j} has index vector type {kind}")
                arrays.append(None if vec is None else vec.array(0, {1: "i", 2: "H", 3: "B"}[kind], "values"))
            dims.append(DimMeta(dm.scalar(0, "b", "format"), dm.scalar(1, "i", "dense_size"), *arrays))
        count = sparse_value_count(shape.tolist(), traversal, block_map, dims)
        if isinstance(count, str):
            raise self.fail(f"{where} is sparse but {count}")
        return count

    # ------------------------------------------------------------------ operators
    def _op(self, si: int, oi: int, op: Table, n: int) -> None:
        where = f"op {oi} of subgraph {si}"
        ci = op.scalar(0, "I", "opcode_index")
        if ci >= len(self.codes):
            raise self.fail(f"{where} names opcode {ci}, but the model has {len(self.codes)} operator codes")
        for slot, field, verb in ((1, "inputs", "reads"), (2, "outputs", "writes"), (8, "intermediates", "uses as intermediate")):
            idx = op.array(slot, "i", field)
            bad = idx[(idx < -1) | (idx >= n)]
            if bad.size:
                raise self.fail(f"{where} {verb} tensor {int(bad[0])} but the subgraph has {n} tensors")
        opt_type = op.scalar(3, "B", "builtin_options_type")
        options = op.table(4, "builtin_options") if opt_type else None
        op.array(5, "B", "custom_options")
        op.array(7, "B", "mutating_variable_inputs")
        lo, ls = op.scalar(9, "Q", "large_custom_options_offset"), op.scalar(10, "Q", "large_custom_options_size")
        if lo > 1 and lo + ls > self.r.n:
            raise self.fail(f"{where}: its custom options (bytes {lo}..{lo + ls}) lie past the end of the file")
        if op.scalar(11, "B", "builtin_options_2_type"):
            op.table(12, "builtin_options_2")
        code = self.codes[ci]
        if code in _CONTROL_FLOW:
            want, fields = _CONTROL_FLOW[code]
            name = _CF_NAMES[code]
            if opt_type != want or options is None:
                raise self.fail(f"{where} is a {name} without its {name.title().replace('_', '')}Options")
            for slot, field in fields:
                target = options.scalar(slot, "i", field)
                if not 0 <= target < self.num_subgraphs:
                    raise self.fail(f"{where} ({name}) has {field} {target}, but the model has {self.num_subgraphs} subgraphs")
                self.calls.setdefault(si, []).append((target, oi, name))

    def _check_cycles(self) -> None:
        """Control-flow references must form a DAG of bounded depth (the runtime recurses)."""
        state: dict[int, int] = {}  # 1 = on the current path, 2 = done
        height: dict[int, int] = {}  # longest call chain below a subgraph

        def visit(start: int) -> None:
            stack: list[tuple[int, int]] = [(start, 0)]
            path: list[int] = []
            while stack:
                sg, i = stack.pop()
                if i == 0:
                    state[sg] = 1
                    path.append(sg)
                edges = self.calls.get(sg, [])
                if i < len(edges):
                    stack.append((sg, i + 1))
                    target, oi, name = edges[i]
                    if state.get(target) == 1:
                        cyc = path[path.index(target):] + [target]
                        raise self.fail(
                            f"op {oi} of subgraph {sg} ({name}) calls subgraph {target}: the subgraphs "
                            f"{' -> '.join(map(str, cyc))} form a cycle"
                        )
                    if target not in state:
                        stack.append((target, 0))
                else:
                    state[sg] = 2
                    height[sg] = 1 + max((height[t] for t, _, _ in edges), default=0)
                    if height[sg] > MAX_CALL_DEPTH:
                        raise self.fail(f"control flow nests deeper than {MAX_CALL_DEPTH} subgraphs (below subgraph {sg})")
                    path.pop()

        for sg in sorted(self.calls):
            if sg not in state:
                visit(sg)
