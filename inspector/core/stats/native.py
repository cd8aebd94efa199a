"""Optional one-pass C kernel for the comparison statistics, compiled on first use.

Accumulating the sums of `TensorStats` with numpy takes ~15 passes over every element of every
intermediate tensor: several times the cost of running the models. This kernel reads the float
and the quantized tensor once and accumulates in float64 in a loop the C compiler vectorizes (plus a
second pass for per-channel sums when those are wanted). It is built with the
system C compiler into a per-user cache the first time it is needed; where no compiler works (or
TFLITE_INSPECTOR_NO_NATIVE=1), `available()` is False and `stats.tensor_sums` uses its numpy path, which
computes the same sums (tested against each other and against the float64 definition).
ctypes releases the GIL during the call, so two threads use two cores.
"""

from __future__ import annotations

import ctypes
import hashlib
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import warnings
from pathlib import Path
from typing import Annotated, Literal, NamedTuple, get_type_hints

import numpy as np

from inspector.core.stats.native_source import SOURCE


class Rule(NamedTuple):
    """How one sum of the kernel's row combines over samples and where it lands in TensorStats."""

    combine: Literal["add", "max", "min"]
    stat: str  # the TensorStats attribute it is added (or taken the extreme) into
    cast: type = float  # the attribute's type


class Sums(NamedTuple):
    """One pair's sums: THE field list. Its order is the order the kernel writes them (`out[k]`,
    a row of `batch`'s output array; the C side's `SUM_FIELDS` list, checked at load: `check_kernel`);
    each field's default is its value over no elements, its `Rule` how it combines over samples
    and which TensorStats attribute it feeds. Everything else on the Python side (positions, the
    empty row, `batch_sums`' combination, `tensor_sums.add_sums`) is derived from this class.
    x = float reference, y = dequantized, e = x - y. A new sum: a field here and its line in the
    C list (`native_source.SUM_FIELDS`) and kernels."""

    x2: Annotated[float, Rule("add", "sx2")] = 0.0  # sum of x²
    e2: Annotated[float, Rule("add", "se2")] = 0.0  # sum of e²
    y2: Annotated[float, Rule("add", "sy2")] = 0.0  # sum of y²
    xy: Annotated[float, Rule("add", "sxy")] = 0.0  # sum of x·y
    e: Annotated[float, Rule("add", "se")] = 0.0  # sum of e
    emax: Annotated[float, Rule("max", "max_abs")] = 0.0  # max |e|
    xmin: Annotated[float, Rule("min", "xmin")] = math.inf  # min x
    xmax: Annotated[float, Rule("max", "xmax")] = -math.inf  # max x
    clip: Annotated[float, Rule("add", "clipped", int)] = 0.0  # count of x beyond the saturation bounds


SUM_FIELDS: tuple[str, ...] = Sums._fields
RULES: tuple[Rule, ...] = tuple(get_type_hints(Sums, include_extras=True)[n].__metadata__[0] for n in SUM_FIELDS)
NO_SUMS = Sums()  # the sums of no elements
# positions in a row of sums, for the array operations over all pairs at once
ADD_AT, MAX_AT, MIN_AT = (np.array([k for k, r in enumerate(RULES) if r.combine == c], np.intp) for c in ("add", "max", "min"))
X2, E2, XMIN, XMAX, EMAX, CLIP = (SUM_FIELDS.index(n) for n in ("x2", "e2", "xmin", "xmax", "emax", "clip"))

# Reassociation lets the reductions vectorize; finite-math assumes no NaN/inf in the data, so
# callers check the sums and fall back to numpy when they are not finite; fp-contract fuses the
# multiply-adds of the sums (one rounding instead of two).
FLAGS = (
    "-O3", "-march=native", "-shared", "-fPIC", "-std=c99", "-fno-math-errno", "-fno-trapping-math",
    "-fassociative-math", "-fno-signed-zeros", "-ffinite-math-only", "-ffp-contract=fast",
)
_KERNELS = {np.dtype(np.float32): "f32", np.dtype(np.int8): "i8", np.dtype(np.uint8): "u8", np.dtype(np.int16): "i16"}
QTYPES = {"float32": 0, "int8": 1, "uint8": 2, "int16": 3}
_lib = None
_tried = False
_lock = threading.Lock()


def _cpu_id() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith(("model name", "flags")):
                return line
    except OSError:
        pass
    return platform.processor()


def _cache_dir() -> Path:
    from inspector.paths import user_cache_dir

    return user_cache_dir()


def _build() -> ctypes.CDLL | None:
    if os.environ.get("TFLITE_INSPECTOR_NO_NATIVE") or getattr(sys, "frozen", False) and not shutil.which("cc"):
        return None
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc or sys.platform == "win32":
        return None
    key = hashlib.sha256((SOURCE + " ".join(FLAGS) + _cpu_id() + platform.machine()).encode()).hexdigest()[:16]
    for folder in (_cache_dir(), Path(tempfile.gettempdir()) / f"tflite-inspector-{os.getuid()}"):
        lib = folder / f"stats_{key}.so"
        try:
            if not lib.exists():
                folder.mkdir(parents=True, exist_ok=True)
                src = folder / f"stats_{key}.c"
                src.write_text(SOURCE)
                tmp = folder / f".stats_{key}.{os.getpid()}.so"
                subprocess.run([cc, *FLAGS, "-o", str(tmp), str(src)], check=True, capture_output=True, timeout=120)
                os.replace(tmp, lib)
            return ctypes.CDLL(str(lib))
        except (OSError, subprocess.SubprocessError):
            continue
    return None


def library() -> ctypes.CDLL | None:
    """The checked kernel, or None (no compiler, or a kernel refused by `check_kernel`: then with
    a warning, and every statistic takes the numpy path)."""
    global _lib, _tried
    with _lock:
        if not _tried:
            _tried = True
            lib = _build()
            reason = check_kernel(lib) if lib is not None else None
            if reason is not None:
                warnings.warn(f"the native statistics kernel {getattr(lib, '_name', '')} was refused ({reason}); "
                              "the statistics are computed with numpy instead (slower, the same numbers)",
                              RuntimeWarning, stacklevel=2)  # fmt: skip
                lib = None
            _lib = lib
    return _lib


def kernel_layout(lib: ctypes.CDLL) -> tuple[str, ...] | None:
    """The sums in the order the kernel writes them (its `sums_layout()`), None if it has none."""
    try:
        fn = lib.sums_layout
    except AttributeError:
        return None
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    return tuple(f for f in (fn() or b"").decode().split(",") if f)


def check_kernel(lib: ctypes.CDLL) -> str | None:
    """Why the kernel must not be used, or None: the layout it declares must be `Sums`' field
    list, and on a small probe every field it writes (through `batch`, the per-sample path of
    every layer, and the per-pair `flat_*`) must be the sum its name says (numpy, float64)."""
    layout = kernel_layout(lib)
    if layout is None:
        return "it declares no layout of its sums"
    if layout != SUM_FIELDS:
        return f"it writes its sums as ({', '.join(layout)}), the Python side reads ({', '.join(SUM_FIELDS)})"
    try:
        wrong = _probe(lib)
    except AttributeError as e:
        return f"an entry point is missing ({e})"
    return f"on a probe, its {wrong} is not what that field holds" if wrong else None


def _probe(lib: ctypes.CDLL) -> str | None:
    """The first field a kernel entry point writes wrongly on a small pair, else None."""
    x = np.linspace(-2.0, 3.0, 16, dtype=np.float32)
    s, z, lo, hi = 0.1, 2.0, -1.5, 2.5
    q8 = np.clip(np.round(x / s) + z + np.arange(16) % 3 - 1, -128, 127).astype(np.int8)
    q16 = q8.astype(np.int16)
    y = (q8.astype(np.float64) - z) * s
    xd = x.astype(np.float64)
    e = xd - y
    want = Sums(float(np.sum(xd * xd)), float(np.sum(e * e)), float(np.sum(y * y)), float(np.sum(xd * y)), float(e.sum()),
                float(np.abs(e).max()), float(xd.min()), float(xd.max()), float(np.count_nonzero((xd < lo) | (xd > hi))))  # fmt: skip
    rows: dict[str, np.ndarray] = {}
    out = np.zeros(len(SUM_FIELDS))
    flat = lib.flat_i8
    flat.restype = None
    flat(_P(x.ctypes.data), _P(q8.ctypes.data), ctypes.c_int64(16), ctypes.c_double(s), ctypes.c_double(z),
         ctypes.c_double(lo), ctypes.c_double(hi), _P(out.ctypes.data))  # fmt: skip
    rows["flat_i8"] = out
    # batch: int8 without and with channel sums (4 channels), int16
    jobs, w = 3, np.array([0, 4, 0], np.int64)

    def i64(*v: float) -> np.ndarray:
        return np.array(v, np.int64)

    def f64(*v: float) -> np.ndarray:
        return np.array(v, np.float64)

    def f32(*v: float) -> np.ndarray:
        return np.array(v, np.float32)

    xs = np.array([x.ctypes.data] * jobs, np.uint64)
    qs = np.array([q8.ctypes.data, q8.ctypes.data, q16.ctypes.data], np.uint64)
    ch = [np.zeros(8) for _ in range(3)] + [np.full(8, np.inf), np.full(8, -np.inf), np.zeros(8)]
    res = np.zeros((jobs, len(SUM_FIELDS)))
    scratch = np.zeros(7 * (4 + 1024), np.float32)
    args = [xs, qs, np.array([1, 1, 3], np.int32), i64(16, 16, 16), f64(s, s, s), f64(z, z, z), f64(lo, lo, lo),
            f64(hi, hi, hi), w, i64(0, 0, 4), *ch[:3], res, f32(s, s, s), f32(z, z, z),
            outward(f64(lo, lo, lo), -1), outward(f64(hi, hi, hi), +1), scratch, *ch[3:]]  # fmt: skip
    fn = lib.batch
    fn.restype = None
    fn(ctypes.c_int64(jobs), *(_P(a.ctypes.data) for a in args))
    rows.update({"batch (int8)": res[0], "batch (int8, channels)": res[1], "batch (int16)": res[2]})
    for entry, row in rows.items():
        for name, got, exp in zip(SUM_FIELDS, row, want, strict=True):
            if not abs(got - exp) <= 1e-4 * abs(exp) + 1e-6:
                return f"'{name}' (from {entry}: {got:.6g}, expected {exp:.6g})"
    return None


def available() -> bool:
    return library() is not None


def supports(x: np.ndarray, q: np.ndarray) -> bool:
    return x.dtype == np.float32 and q.dtype in _KERNELS


def outward(bound: np.ndarray, side: int) -> np.ndarray:
    """float32 bounds such that, for every float32 x, x < lo32 iff x < lo (side -1: lo, rounded
    up) and x > hi32 iff x > hi (side +1: hi, rounded down)."""
    b32 = bound.astype(np.float32)
    wrong = b32 < bound if side < 0 else b32 > bound
    toward = np.float32(np.inf if side < 0 else -np.inf)
    return np.where(wrong, np.nextafter(b32, toward), b32).astype(np.float32)


_P = ctypes.c_void_p


def tensor_sums(
    x: np.ndarray, q: np.ndarray, s: float, z: float, lo: float, hi: float, channels: int | None
) -> tuple[Sums, dict[str, np.ndarray]]:
    """Sums over all elements (per-tensor dequantization), and per last-axis channel if asked.

    The `Sums` (Python floats), and with channels the arrays ch_x2, ch_e2, ch_min, ch_max (of x)
    and ch_clip (counts of x outside [lo, hi]) by name (else an empty dict).
    """
    lib = library()
    assert lib is not None
    xf = np.ascontiguousarray(x).reshape(-1)
    qf = np.ascontiguousarray(q).reshape(-1)
    code = _KERNELS[q.dtype]
    out = np.empty(len(SUM_FIELDS))
    flat = getattr(lib, "flat_" + code)
    flat.restype = None
    flat(_P(xf.ctypes.data), _P(qf.ctypes.data), ctypes.c_int64(xf.size), ctypes.c_double(s),
         ctypes.c_double(z), ctypes.c_double(lo), ctypes.c_double(hi), _P(out.ctypes.data))
    sums = Sums._make(out.tolist())
    res: dict[str, np.ndarray] = {}
    if channels:
        cx2, ce2, ccl = np.zeros(channels), np.zeros(channels), np.zeros(channels)
        cmn, cmx = np.full(channels, np.inf), np.full(channels, -np.inf)
        chan = getattr(lib, "chan_" + code)
        chan.restype = None
        chan(_P(xf.ctypes.data), _P(qf.ctypes.data), ctypes.c_int64(xf.size // channels),
             ctypes.c_int64(channels), ctypes.c_double(s), ctypes.c_double(z), ctypes.c_double(lo),
             ctypes.c_double(hi), _P(cx2.ctypes.data), _P(ce2.ctypes.data), _P(cmn.ctypes.data),
             _P(cmx.ctypes.data), _P(ccl.ctypes.data))
        res["ch_x2"], res["ch_e2"], res["ch_min"], res["ch_max"], res["ch_clip"] = cx2, ce2, cmn, cmx, ccl
    return sums, res


class BlockCopy:
    """Copies fixed blocks of memory, all of them in one native call when the kernel is there
    (else one `ctypes.memmove` each): `copy()` copies src[k] to dst[k] (addresses and sizes given
    once; the caller keeps both sides alive and in place)."""

    def __init__(self, dst: list[int], src: list[int], sizes: list[int]) -> None:
        self.blocks = list(zip(dst, src, sizes, strict=True))
        self._arrays = [np.array(dst, np.uint64), np.array(src, np.uint64), np.array(sizes, np.int64)]
        lib = library()
        self._fn = lib.copy_blocks if lib is not None else None
        if self._fn is not None:
            self._fn.restype = None
            self._args = [ctypes.c_int64(len(dst)), *(_P(a.ctypes.data) for a in self._arrays)]

    def copy(self) -> None:
        if self._fn is not None:
            self._fn(*self._args)
            return
        for d, s, n in self.blocks:
            ctypes.memmove(d, s, n)


def channel_error_sums(x: np.ndarray, q: np.ndarray, s: float, z: float) -> np.ndarray | None:
    """Sum over rows of x - (q - z) * s per last-axis channel (float32 blocks into float64), or
    None when the kernel is not available for these dtypes."""
    lib = library()
    if lib is None or not supports(x, q) or x.ndim == 0 or x.shape != q.shape:
        return None
    w = x.shape[-1]
    xf, qf = np.ascontiguousarray(x), np.ascontiguousarray(q)
    ce, a = np.zeros(w), np.zeros(w, np.float32)
    code = _KERNELS[q.dtype]
    fn = getattr(lib, "chmean_" + code)
    fn.restype = None
    rows = ctypes.c_int64(x.size // w)
    if code == "i16":
        fn(_P(xf.ctypes.data), _P(qf.ctypes.data), rows, ctypes.c_int64(w), ctypes.c_double(s), ctypes.c_double(z), _P(ce.ctypes.data))
    else:
        fn(_P(xf.ctypes.data), _P(qf.ctypes.data), rows, ctypes.c_int64(w), ctypes.c_float(s), ctypes.c_float(z),
           _P(ce.ctypes.data), _P(a.ctypes.data))  # fmt: skip
    return ce


def middle_axis_sums(x: np.ndarray, q: np.ndarray, axis: int, s: float, z: float, lo: float, hi: float) -> dict[str, np.ndarray] | None:
    """Per index of `axis` (x viewed as (outer, n, inner)): sums of x^2 and e^2, minimum and
    maximum of x, count outside [lo, hi] (lo/hi as float32, rounded outward by the caller); None
    when the kernel is not available for these dtypes (int16: the numpy path)."""
    lib = library()
    if lib is None or x.dtype != np.float32 or q.dtype not in (np.float32, np.int8, np.uint8) or x.shape != q.shape:
        return None
    ax = axis % x.ndim
    n = x.shape[ax]
    outer = int(np.prod(x.shape[:ax], dtype=np.int64))
    inner = int(np.prod(x.shape[ax + 1 :], dtype=np.int64))
    xf, qf = np.ascontiguousarray(x), np.ascontiguousarray(q)
    out = {k: np.zeros(n) for k in ("x2", "e2", "clip")}
    out["min"], out["max"] = np.full(n, np.inf), np.full(n, -np.inf)
    fn = getattr(lib, "rows_" + _KERNELS[q.dtype])
    fn.restype = None
    fn(_P(xf.ctypes.data), _P(qf.ctypes.data), ctypes.c_int64(outer), ctypes.c_int64(n), ctypes.c_int64(inner),
       ctypes.c_float(s), ctypes.c_float(z), ctypes.c_float(lo), ctypes.c_float(hi), *(_P(out[k].ctypes.data) for k in ("x2", "e2", "min", "max", "clip")))
    return out
