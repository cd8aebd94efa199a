"""Plot-ready series of a comparison: one value per layer against depth, for a chosen metric.

x is the layer identifier used everywhere: the quantized model's (B's) op index, the number
the op tables, reports and `compare --json` `op_index` show (layers come in B's execution
order, so x increases along the plot). A baseline or per-sample run is aligned to the main run
by float tensor (`aligned_x`), so the runs line up layer by layer. Values that cannot be
drawn as they are get a drawable stand-in and a note: infinite SQNR (the tensors are equal), and SQNR of at least
`NEAR_EXACT_DB` (equal up to float rounding, e.g. an isolated MAX_POOL), are drawn on one line 10 dB
above the best other SQNR (`exact_sqnr_position`), so they do not squash the scale; zero error on a log axis at a floor below the smallest nonzero value.
Also the error grade behind the colour-coded SQNR column of the layer lists.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from inspector.core.compare.clip_threshold import CLIP_RATE
from inspector.core.compare.diagnosis_text import FIX_LABELS
from inspector.core.compare.inside import part_verdict, worst_part_db
from inspector.core.compare.result import ComparisonResult, LayerResult
from inspector.core.stats.metric_table import MetricSpec, metric_specs, spec
from inspector.core.stats.metrics import Metrics
from inspector.core.stats.sqnr_scale import NEAR_EXACT_DB, best_below_exact, line_above
from inspector.core.stats.sqnr_scale import (
    SQNR_EXACT_DB as SQNR_EXACT_DB,  # re-exported for the views
)
from inspector.core.tflite.op_facts import facts
from inspector.core.viewdata.layer_figures import kept, layer_figures, on_warm

WORST_CHANNEL_KEY = "worst_channel_sqnr_db"  # the lowest SQNR of a layer's channels or slices (`inside`)
# not a `Metrics` field: derived from a layer's channels and slices, so presented beside the table
WORST_CHANNEL = MetricSpec(WORST_CHANNEL_KEY, "worst channel SQNR", "dB", higher_is_better=True, unit_on_values=True,
                           report=False)
SQNR_KEYS = ("sqnr_db", WORST_CHANNEL_KEY)


def plot_metrics() -> tuple[MetricSpec, ...]:
    """The layer plot's choices: the metric table's plotted metrics, then the worst channel's SQNR."""
    return tuple(m for m in metric_specs() if m.plot) + (WORST_CHANNEL,)


def metric_spec(key: str) -> MetricSpec:
    """The presentation of `key`: a row of the metric table, or `WORST_CHANNEL`."""
    return WORST_CHANNEL if key == WORST_CHANNEL_KEY else spec(key)


GOOD_DB, BAD_DB = 30.0, 10.0  # SQNR at or above GOOD is green, at or below BAD red


EXACT_NOTE = "equal tensors (SQNR ∞)"


@dataclass(frozen=True)
class LayerSeries:
    name: str
    depth: np.ndarray  # x: B's op index of each layer (`LayerResult.op_index`)
    values: np.ndarray  # y, drawable (NaN where the metric does not apply)
    raw: tuple[float | None, ...]  # the metric as computed (inf kept), per layer
    layer_index: tuple[int, ...]  # position in result.layers
    notes: tuple[str, ...]  # per point: "" or why the drawn value differs from raw
    shape_only: tuple[bool, ...] = ()  # per point: an integer shape op (`is_shape_only`), not drawn

    def drawn(self) -> np.ndarray:
        """Mask of the points the plot draws: finite values of layers that carry quantization error."""
        shape = np.asarray(self.shape_only or [False] * len(self.values), bool)
        mask: np.ndarray = np.isfinite(self.values) & ~shape
        return mask


SHAPE_ONLY_NOTE = "integer shape op (no quantization): not on the error curve"


def is_shape_only(layer: LayerResult) -> bool:
    """An op whose output is an unquantized integer or bool tensor (SHAPE, STRIDED_SLICE or PACK
    on shapes, ARG_MAX...): equal by construction, so its ∞ SQNR says nothing about the error
    that flows along the network and would only make spikes in the accumulated curve."""
    return layer.dtype in ("int32", "int64", "bool", "uint32", "uint64") and not layer.scale


def metric_value(m: Metrics | None, key: str) -> float | None:
    if m is None:
        return None
    v = getattr(m, key)
    return None if v is None else float(v)


def exact_sqnr_position(*results: ComparisonResult | None) -> float:
    """Where to draw infinite SQNR: 10 dB above the best finite layer SQNR, rounded up to 10
    (each result's best kept with it: made by `warm`, in the worker)."""
    return line_above(max((b for r in results if r is not None if (b := _best_sqnr(r)) is not None), default=None))


def _best_sqnr(result: ComparisonResult) -> float | None:
    return kept(result, "best below exact", lambda: best_below_exact(
        m.sqnr_db for layer in result.layers for m in (layer.metrics, layer.isolated) if m is not None))


def layer_series(
    result: ComparisonResult, key: str = "sqnr_db", isolated: bool = False, name: str = "", exact_at: float | None = None
) -> LayerSeries:
    """The chosen metric for every layer of `result` (isolated error when `isolated`)."""
    top = exact_sqnr_position(result) if exact_at is None else exact_at
    s = kept(result, ("series", key, isolated, top), lambda: _series(result, key, isolated, top))  # shared: never modified
    return s if s.name == name else dataclasses.replace(s, name=name)


def _series(result: ComparisonResult, key: str, isolated: bool, top: float, name: str = "") -> LayerSeries:
    choice = metric_spec(key)
    if key == WORST_CHANNEL_KEY:  # accumulated only: channels are measured on the end-to-end run
        raw = [None] * len(result.layers) if isolated else list(layer_figures(result).worst_part_db)
    else:
        raw = [metric_value(_own_metrics(layer) if isolated else layer.metrics, key) for layer in result.layers]
    vals = np.array([np.nan if v is None else v for v in raw], np.float64)
    notes = [INPUT_RANGE_NOTE if isolated and _holds_input_range(layer) else "" for layer in result.layers]
    if key in SQNR_KEYS:
        for i, v in enumerate(raw):
            if v is not None and math.isinf(v):
                vals[i] = top if v > 0 else np.nan
                notes[i] = EXACT_NOTE if v > 0 else "float reference is all zeros"
            elif v is not None and v >= NEAR_EXACT_DB:
                vals[i] = top
                notes[i] = f"{v:.0f} dB: equal up to float rounding, drawn on the ∞ line"
    if choice.log:
        pos = vals[np.isfinite(vals) & (vals > 0)]
        floor = float(pos.min()) / 10 if pos.size else 1e-12
        for i, v in enumerate(vals):
            if np.isfinite(v) and v <= 0:
                vals[i] = floor
                notes[i] = "zero (drawn at the axis floor)"
    shape = tuple(is_shape_only(layer) for layer in result.layers)
    for i, flag in enumerate(shape):
        if flag:
            notes[i] = SHAPE_ONLY_NOTE
    n = len(raw)
    x = np.array([layer.op_index for layer in result.layers], np.float64)
    return LayerSeries(name, x, vals, tuple(raw), tuple(range(n)), tuple(notes), shape)


INPUT_RANGE_NOTE = "the model input's range is this op's: its own error is its accumulated error"


def _holds_input_range(layer: LayerResult) -> bool:
    """The op that holds the model input's range (diagnosed `input_range`): fed B's input as B's
    QUANTIZE made it (already clipped), its isolated run reads no error; the clipping is its own."""
    return layer.diagnosis is not None and layer.diagnosis.cause == "input_range"


def _own_metrics(layer: LayerResult) -> Metrics | None:
    """The layer's own error on the plot: its isolated error, or for the op that holds the model
    input's range its accumulated one (as the diagnosis judges it)."""
    return layer.metrics if _holds_input_range(layer) else layer.isolated


def aligned_x(run: ComparisonResult, main: ComparisonResult | None) -> np.ndarray:
    """x of `run`'s layers on `main`'s axis: the op index of `main`'s layer with the same float
    tensor (a baseline may come from another version of B), else the run's own op index."""
    at = {layer.float_tensor: layer.op_index for layer in main.layers} if main is not None else {}
    return np.array([at.get(layer.float_tensor, layer.op_index) for layer in run.layers], np.float64)


def op_label(layer: LayerResult) -> str:
    """"op 12" (B's op index), with A's op beside it where the numbers differ: "op 12 (A: op 10)"."""
    f = layer.float_op_index
    return f"op {layer.op_index}" + ("" if f is None or f == layer.op_index else f" (A: op {f})")


def format_value(v: float | None, key: str) -> str:
    """`v` of metric `key` as the views show it (`MetricSpec.text`: "n/a", "∞", "31.2 dB")."""
    return metric_spec(key).text(v)


def layer_tooltip(layer: LayerResult, key: str, raw: float | None, note: str = "") -> str:
    iso = ""
    if layer.isolated is not None and key != WORST_CHANNEL_KEY:
        iso = f"\nisolated: {format_value(metric_value(layer.isolated, key), key)}"
    extra = f" ({note})" if note else ""
    return (
        f"{op_label(layer)} {layer.op_type}\n{layer.tensor_name}\n"
        f"{metric_spec(key).label}: {format_value(raw, key)}{extra}{iso}{inside_lines(layer)}{diagnosis_lines(layer)}"
    )


def inside_lines(layer: LayerResult) -> str:
    """Tooltip lines about the layer's channels and slices: the worst channel, each slice, and
    the verdict where one reads >= 20 dB below the tensor ('' when none were measured)."""
    c, out = layer.channels, ""
    if c is not None and c.count:
        w = c.worst
        steps = c.steps_used()
        st = "" if steps is None else f", {float(steps[w]):.1f} steps used"
        out += (f"\nworst of {c.count} channels (axis {c.axis}): channel {w}, SQNR {format_value(c.sqnr_db[w], 'sqnr_db')}"
                f"{st}; channel ranges differ {format_value(c.range_ratio, 'mse')}x (largest / median)")
    for s in layer.slices or ():
        src = "" if s.producer_op is None else f" from op {s.producer_op} {s.producer_type}"
        st = "" if s.steps_used is None else f", {s.steps_used:.1f} steps used"
        out += f"\nslice {s.label}{src}: SQNR {format_value(s.sqnr_db, 'sqnr_db')}{st}"
    v = part_verdict(f"op {layer.op_index}", layer.metrics.sqnr_db, c, layer.slices)
    return out + (f"\n⚠ {v}" if v else "")


def worst_channel_cells(result: ComparisonResult, float_side: bool = False) -> dict[int, tuple[str, float, Callable[[], str]]]:
    """The layer list's worst-channel column by op index (A's with `float_side`): (text, SQNR for
    the colour grade, tooltip made when asked for), from the figures computed once per result
    (`layer_figures`): O(layers) lookups, no statistics, when a 1,500-layer result arrives."""
    figs = layer_figures(result)
    out: dict[int, tuple[str, float, Callable[[], str]]] = {}
    for i, layer in enumerate(result.layers):
        op = layer.float_op_index if float_side else layer.op_index
        v = figs.worst_part_db[i]
        if op is None or op in out or v is None:
            continue
        text = format_value(v, "sqnr_db").replace(" dB", "") + (" ⚠" if figs.verdict[i] else "")
        out[op] = (text, v, functools.partial(_worst_channel_tip, layer))
    return out


def _worst_channel_tip(layer: LayerResult) -> str:
    return f"{op_label(layer)} {layer.op_type}{inside_lines(layer)}".strip()


def _error_tip(layer: LayerResult, sqnr: float, head: str) -> str:
    return head + layer_tooltip(layer, "sqnr_db", sqnr)


def error_cells(result: ComparisonResult, float_side: bool = False, isolated: bool = False
                ) -> dict[int, tuple[str, float | None, Callable[[], str]]]:  # fmt: skip
    """The layer list's SQNR column by op index: (text, SQNR for the colour grade or None when the
    layer has no such figure, tooltip made when asked for)."""
    out: dict[int, tuple[str, float | None, Callable[[], str]]] = {}
    for op, layer in op_errors(result, float_side=float_side).items():
        m = layer.isolated if isolated else layer.metrics
        if m is None:  # no isolated figure for this layer: say why in the tooltip
            note = layer.isolated_note or "no isolated error for this layer"
            out[op] = ("—", None, functools.partial(str, note))
            continue
        s = m.sqnr_db
        head = "isolated (own error)\n" if isolated else ""
        out[op] = (format_value(s, "sqnr_db").replace(" dB", ""), s, functools.partial(_error_tip, layer, s, head))
    return out


def worst_channel_cell(layer: LayerResult | None) -> tuple[str, float | None, str]:
    """(text, SQNR for the colour grade, tooltip) of the layer lists' worst-channel column."""
    if layer is None:
        return "", None, ""
    v = worst_part_db(layer.channels, layer.slices)
    if v is None:
        return "", None, ""
    verdict = part_verdict(f"op {layer.op_index}", layer.metrics.sqnr_db, layer.channels, layer.slices)
    text = format_value(v, "sqnr_db").replace(" dB", "") + (" ⚠" if verdict else "")
    return text, v, (f"{op_label(layer)} {layer.op_type}{inside_lines(layer)}").strip()


CAUSE_LABELS = {
    "clipping": "clipping", "resolution": "resolution", "weight_channels": "uneven weight channels",
    "weight_rounding": "weight rounding", "bias_shift": "bias shift", "inherited": "inherited",
    "kernel": "kernel", "none": "", "mixed_ranges": "mixed ranges", "channel_imbalance": "channel imbalance",
    "input_range": "input range",
}  # fmt: skip


def fix_label(layer: LayerResult) -> str:
    """'re-calibrate op 3': the diagnosis' fix in words ('' without one)."""
    d = layer.diagnosis
    if d is None or d.fix is None:
        return ""
    return f"{FIX_LABELS.get(d.fix.edit, d.fix.edit)} op {', '.join(map(str, d.fix.ops))}"


def diagnosis_lines(layer: LayerResult) -> str:
    """The tooltip lines of the layer's diagnosis ('' without one)."""
    d = layer.diagnosis
    if d is None:
        return ""
    fix = fix_label(layer)
    return f"\ncause: {d.cause} — {d.evidence}" + (f"\nfix: {fix}" if fix else "")


def cause_cell(layer: LayerResult | None, source_label: str = "op") -> tuple[str, str]:
    """(short text, tooltip) of the layer list's Cause column; an inherited error names the op it
    comes from by B's op index, the diagnosis' own (`source_label` "B op" on A's list says so)."""
    if layer is None or layer.diagnosis is None:
        return "", ""
    d = layer.diagnosis
    text = CAUSE_LABELS.get(d.cause, d.cause)
    if d.cause == "inherited" and d.source_op is not None:
        text = f"← {source_label} {d.source_op}"
    return text, f"{d.cause}: {d.evidence}" + (f"\nfix: {fix_label(layer)}" if d.fix else "")


def cause_cells(result: ComparisonResult, float_side: bool = False) -> dict[int, tuple[str, str]]:
    """The Cause column of one layer list, by that model's op index. One numbering: every op it
    names is B's (the layer's identity: the plot, the tables, the fixes and the diagnosis' words),
    so on A's list (`float_side`) an inherited error reads "← B op 3" and the tooltip says which
    of A's ops that is (A's list said "← op 2" beside a tooltip and a fix naming op 3)."""
    out = {}
    for op, layer in op_errors(result, float_side=float_side).items():
        text, tip = cause_cell(layer, "B op" if float_side else "op")
        if float_side and text:
            d = layer.diagnosis
            src = d.source_op if d is not None else None
            at = result.layer_for_op(src)
            where = f"; B's op {src} is A's op {at.float_op_index}" if at is not None and at.float_op_index is not None else ""
            tip += f"\n(op numbers are model B's, the layer numbering of the comparison{where})"
        out[op] = (text, tip)
    return out


def clipping_matters(rate: float | None, op_type: str | None = None) -> bool:
    """Whether a clip rate deserves the warning colour: past the one clip threshold
    (`compare.clip_threshold.CLIP_RATE`: the diagnosis', the graph's and the audit's), so "clipped
    0.00 %" is never shown as a problem; never on an op whose output grid the kernel fixes (SOFTMAX, LOGISTIC, TANH...: the grid's end, not a range)."""
    if op_type is not None and facts(op_type).fixed_outputs:
        return False
    return rate is not None and math.isfinite(rate) and rate > CLIP_RATE


def error_grade(sqnr_db: float | None) -> float | None:
    """0 = good (>= GOOD_DB), 1 = bad (<= BAD_DB), linear between; None when unknown."""
    if sqnr_db is None or math.isnan(sqnr_db):
        return None
    if sqnr_db >= GOOD_DB:
        return 0.0
    if sqnr_db <= BAD_DB:
        return 1.0
    return (GOOD_DB - sqnr_db) / (GOOD_DB - BAD_DB)


def op_errors(result: ComparisonResult, float_side: bool = False) -> dict[int, LayerResult]:
    """Layer result per op index of the quantized model (or of the float model's matching op)."""
    out: dict[int, LayerResult] = {}
    for layer in result.layers:
        op = layer.float_op_index if float_side else layer.op_index
        if op is not None and op not in out:
            out[op] = layer
    return out


def list_cells(result: ComparisonResult, float_side: bool, isolated: bool = False) -> tuple[
        dict[int, tuple[str, str]], dict[int, tuple[str, float, Callable[[], str]]],
        dict[int, tuple[str, float | None, Callable[[], str]]]]:  # fmt: skip
    """One layer list's Cause, worst-channel and SQNR columns (`cause_cells`,
    `worst_channel_cells`, `error_cells`), made once per result: both lists' are made in the
    worker that produced the result (`layer_figures.warm`). Shared: never modify them."""
    return (cause_column(result, float_side),
            kept(result, ("worst", float_side), lambda: worst_channel_cells(result, float_side=float_side)),
            kept(result, ("error", float_side, isolated),
                 lambda: error_cells(result, float_side=float_side, isolated=isolated)))


def cause_column(result: ComparisonResult, float_side: bool) -> dict[int, tuple[str, str]]:
    """`cause_cells`, made once per result (shared: never modify it)."""
    return kept(result, ("cause", float_side), lambda: cause_cells(result, float_side=float_side))


def _warm_cells(result: ComparisonResult) -> None:
    for side in (True, False):
        list_cells(result, side)
    layer_series(result)  # the layer plot's default: accumulated SQNR (and own, when measured)
    if result.isolated:
        layer_series(result, isolated=True)


on_warm(_warm_cells)
