"""What the requantize panel offers per layer, and how the versions of model B are named.

A treatment choice is a (treatment, weight granularity) pair of `requantize.plan`; the panel lists
them by label and turns each chosen layer into an `Override("op:INDEX", ...)`. Version names
say what changed in words an engineer recognises: "v1 keep-float logits, softmax".
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from inspector.core.requantize.plan import ALGORITHMS, Override, Plan, compile_selector
from inspector.core.tflite.layer_names import layer_name, layer_short_name
from inspector.core.tflite.model import Model
from inspector.core.tflite.op_facts import BOUNDARY_OPS, PROBABILITY_OPS

if TYPE_CHECKING:
    from inspector.core.requantize.surgical_plan import Edit, SurgicalPlan


@dataclass(frozen=True)
class TreatmentChoice:
    key: str
    label: str
    treatment: str  # requantize.plan.TREATMENTS
    per_channel: bool | None = None  # None: as the plan
    short: str = ""  # for version names

    @property
    def takes_algorithm(self) -> bool:
        return self.treatment != "keep_float"


TREATMENT_CHOICES: tuple[TreatmentChoice, ...] = (
    TreatmentChoice("keep_float", "keep float", "keep_float", None, "keep-float"),
    TreatmentChoice("a16w8", "a16w8 (16-bit activations, int8 weights)", "a16w8", None, "a16w8"),
    TreatmentChoice("int8_channel", "int8, per-channel weights", "int8", True, "int8-per-channel"),
    TreatmentChoice("int8_tensor", "int8, per-tensor weights", "int8", False, "int8-per-tensor"),
    TreatmentChoice("weight_only_int8", "weight-only int8", "weight_only_int8", None, "weight-only-int8"),
    TreatmentChoice("weight_only_int4", "weight-only int4", "weight_only_int4", None, "weight-only-int4"),
    TreatmentChoice("dynamic", "dynamic range (int8 weights, float activations)", "dynamic", None, "dynamic"),
)
CHOICE_BY_KEY = {c.key: c for c in TREATMENT_CHOICES}
BASE_CHOICES: tuple[tuple[str, str], ...] = (
    ("int8", "full int8"),
    ("a16w8", "a16w8 (16-bit activations)"),
    ("dynamic", "dynamic range"),
    ("weight_only_int8", "weight-only int8"),
    ("weight_only_int4", "weight-only int4"),
)
ALGORITHM_LABELS = {"min_max": "min/max", "mse": "MSE", "octav": "OCTAV"}


@functools.lru_cache(maxsize=256)
def algorithms_for(op_type: str) -> tuple[str, ...]:
    """Calibration algorithms litert-quantizer has a rule for on this op type (min/max always:
    the quantizer falls back to the base rule, and says nothing, where an algorithm has none)."""
    registered = registered_ops()
    return tuple(name for name, key in ALGORITHMS.items() if name == "min_max" or op_type in registered[key])


_OPS_FILE = "litert-quantizer-ops.json"


@functools.lru_cache(maxsize=1)
def registered_ops() -> dict[str, frozenset[str]]:
    """Per algorithm key of `ALGORITHMS`, the op types litert-quantizer has a rule for. Importing
    litert-quantizer costs 0.5-2 s (scipy with it), which the app paid at every start: its answers
    are kept in the cache folder (`write_cache_file`), keyed by its installed `algorithm_manager`
    (path, size, mtime) and the keys asked, and read back while those hold."""
    import importlib.util
    import json
    import os

    from inspector.paths import user_cache_dir

    spec = importlib.util.find_spec("litert_quantizer")
    origin = spec.origin if spec is not None else None
    stamp = None
    if origin:
        manager = os.path.join(os.path.dirname(origin), "algorithm_manager.py")
        try:
            st = os.stat(manager)
            stamp = [manager, st.st_size, st.st_mtime_ns, sorted(ALGORITHMS.values())]
        except OSError:
            stamp = None
    path = user_cache_dir() / _OPS_FILE
    use_disk = stamp is not None and not os.environ.get("TFLITE_INSPECTOR_NO_DISK_CACHE")
    if use_disk:
        try:
            kept = json.loads(path.read_text())
            if kept["stamp"] == stamp:
                return {key: frozenset(kept["ops"][key]) for key in ALGORITHMS.values()}
        except (OSError, ValueError, KeyError, TypeError):
            pass  # missing, unreadable or another version's: asked again below
    from litert_quantizer import algorithm_manager

    ops = {}
    for key in ALGORITHMS.values():
        try:
            names = algorithm_manager.get_supported_ops(key)
        except ValueError:  # an algorithm this version does not register
            names = []
        ops[key] = sorted({str(getattr(n, "value", n)) for n in names})
    if use_disk:
        from inspector.core.writing import write_cache_file

        try:
            write_cache_file(path, json.dumps({"stamp": stamp, "ops": ops}).encode())
        except OSError:
            pass  # a cache that cannot be written is only slower
    return {key: frozenset(v) for key, v in ops.items()}


def override_for(float_op: int, choice_key: str, algorithm: str | None = None) -> Override:
    """The plan override giving float-model op `float_op` the chosen treatment."""
    c = CHOICE_BY_KEY[choice_key]
    algo = algorithm if c.takes_algorithm and algorithm not in (None, "") else None
    return Override(f"op:{float_op}", c.treatment, c.per_channel, algo)


def choice_of(override: Override) -> str:
    """The panel's choice key for an override (int8 with the plan's granularity -> per-channel)."""
    for c in TREATMENT_CHOICES:
        if c.treatment == override.treatment and (c.per_channel is None or c.per_channel == (override.per_channel is not False)):
            return c.key
    raise ValueError(f"no panel choice for treatment {override.treatment!r}")


def op_rows(plan: Plan) -> list[tuple[int, str, str | None]]:
    """(float op, choice key, algorithm) per `op:INDEX` override of `plan`, last one winning."""
    rows: dict[int, tuple[int, str, str | None]] = {}
    for o in plan.overrides:
        key = compile_selector(o.selector)
        if isinstance(key, int):
            rows[key] = (key, choice_of(o), o.algorithm)
    return list(rows.values())


def short_layer_name(model: Model, op_index: int) -> str:
    """'cnn_1/conv2_1/Relu;cnn_1/conv2_1/convolution' -> 'conv2', unique in the subgraph
    ('activation_1' where three convs have Keras activations): `core.tflite.layer_names`."""
    return layer_short_name(model, op_index)


def describe_plan(plan: Plan | None, float_model: Model | None, b_of: Callable[[int], int | None] | None = None) -> str:
    """'keep-float logits, softmax; a16w8 conv2' (base scheme added when it is not int8); with
    `b_of` (A's op -> B's op in the B open when planned) layers are named as everywhere else,
    'keep-float op 12 logits' (`core.tflite.layer_names`)."""
    if plan is None:
        return "from a recipe"
    groups: dict[str, list[str]] = {}
    for op, key, algo in op_rows(plan):
        name = short_layer_name(float_model, op) if float_model is not None else f"op {op}"
        if b_of is not None:
            b = b_of(op)
            name = f"op {b} {name}" if b is not None else f"A op {op} {name}"
        label = CHOICE_BY_KEY[key].short + (f" ({ALGORITHM_LABELS[algo]})" if algo and algo != "min_max" else "")
        groups.setdefault(label, []).append(name)
    others = [o.selector for o in plan.overrides if not isinstance(compile_selector(o.selector), int)]
    parts = [f"{k} {', '.join(v)}" for k, v in groups.items()] + [f"pattern {s}" for s in others]
    base = "" if plan.base == "int8" else f"base {plan.base}"
    text = "; ".join(p for p in [base, *parts] if p)
    return text or f"{plan.base}, no overrides"


def version_name(number: int, plan: Plan | None, float_model: Model | None, what: str = "",
                 b_of: Callable[[int], int | None] | None = None) -> str:  # fmt: skip
    """'v1 keep-float conv2' — or 'v2 suggest: keep-float logits' with `what`; 'op 12 logits'
    with `b_of` (see `describe_plan`)."""
    return f"v{number} {what + ': ' if what else ''}{describe_plan(plan, float_model, b_of)}"


def original_name(base: str) -> str:
    return f"v0 original {base}"


# ---------------------------------------------------------------------- surgical route (edits of B)
@dataclass(frozen=True)
class EditChoice:
    """One per-layer edit the panel offers on the surgical route: a `surgical_plan` edit kind
    (and, for re-calibration, its method)."""

    key: str
    label: str
    kind: str  # surgical_plan.KINDS
    calibration: str | None = None
    short: str = ""

    @property
    def tip(self) -> str:
        return EDIT_TIPS[self.kind]


EDIT_TIPS = {
    "keep_float": "The op runs in float with model A's weights and bias; DEQUANTIZE before it, QUANTIZE back to "
                  "its original output scale and zero-point after it, so its consumers are unchanged",
    "per_channel": "Weights re-quantized per output channel from A's float weights (symmetric, max-abs), "
                   "bias re-derived from A's float bias",
    "weight_mse": "Per-channel weights whose scale minimises the weight MSE (a clipping search) instead of max-abs",
    "bias_correct": "Subtract the measured per-channel mean error of the op's own output from its int32 bias",
    "a16w8": "16-bit activations with int8 weights (where LiteRT has a 16x8 kernel); conversions at the edges",
    "recalibrate": "New scale / zero-point for the op's output from the float values observed on the samples "
                   "(propagated through ops that must keep them; refused for fixed outputs such as SOFTMAX)",
    "equalize": "Cross-layer equalization of this producer (conv / depthwise / FC ending in no activation or ReLU) "
                "with its one consumer: channel i of its output ÷ s_i, the consumer's input channel i × s_i "
                "(from A's float weights), both re-quantized per channel, its output re-calibrated",
    "relu6_equalize": "DFQ's ReLU6 recipe: this producer's ReLU6 becomes ReLU (refused where the float model's values "
                      "reach 6 often or its output changes too much: a change of the float function, measured and "
                      "stated), then equalize with its one consumer",
    "input_range": "Widen the int8/uint8 model input this op reads to the samples' real range (new scale / zero "
                   "point, the op's bias re-derived). Changes the model's interface: the caller must quantize its "
                   "inputs with the new scale and zero point",
}  # fmt: skip


EDIT_CHOICES: tuple[EditChoice, ...] = (
    EditChoice("keep_float", "keep float", "keep_float", None, "keep-float"),
    EditChoice("per_channel", "per-channel weights", "per_channel", None, "per-channel"),
    EditChoice("weight_mse", "MSE weight rounding", "weight_mse", None, "mse-weights"),
    EditChoice("bias_correct", "bias correction", "bias_correct", None, "bias-corrected"),
    EditChoice("a16w8", "a16w8 (16-bit act.)", "a16w8", None, "a16w8"),
    EditChoice("recal_minmax", "re-calibrate (min/max)", "recalibrate", "minmax", "recalibrated"),
    EditChoice("recal_mse", "re-calibrate (MSE)", "recalibrate", "mse", "recalibrated-mse"),
    EditChoice("recal_p9999", "re-calibrate (p99.99)", "recalibrate", "percentile:99.99", "recalibrated-p99.99"),
    EditChoice("equalize", "equalize", "equalize", None, "equalized"),
    EditChoice("input_range", "widen the model input", "input_range", None, "input-widened"),
    EditChoice("relu6_equalize", "ReLU6 -> ReLU, equalize", "relu6_equalize", None, "relu6-equalized"),
)
EDIT_BY_KEY = {c.key: c for c in EDIT_CHOICES}
EDIT_LABELS = {"keep_float": "keep float", "per_channel": "per-channel", "weight_mse": "MSE weights",
               "bias_correct": "bias correction", "a16w8": "a16w8", "recalibrate": "re-calibrated",
               "equalize": "equalized", "input_range": "input widened",
               "relu6_equalize": "ReLU6 -> ReLU, equalized"}  # fmt: skip


def edit_for(quant_op: int, choice_key: str) -> Edit:
    """The surgical edit giving op `quant_op` of model B the chosen edit (addressed `op:INDEX`)."""
    from inspector.core.requantize.surgical_plan import Edit

    c = EDIT_BY_KEY[choice_key]
    return Edit(c.kind, f"op:{quant_op}", c.calibration, (quant_op,))


def edit_choice_of(kind: str, calibration: str | None = None) -> str:
    """The panel's choice key of an edit kind (re-calibration by its method)."""
    for c in EDIT_CHOICES:
        if c.kind == kind and (kind != "recalibrate" or c.calibration == (calibration or "minmax")):
            return c.key
    raise ValueError(f"no panel choice for edit {kind!r} ({calibration})")


def edit_label(kind: str, calibration: str | None = None) -> str:
    """'keep float', 're-calibrated (mse)': the edit as the delta table names it."""
    base = EDIT_LABELS.get(kind, kind)
    return f"{base} ({calibration})" if kind == "recalibrate" and calibration not in (None, "minmax") else base


def describe_surgical(plan: SurgicalPlan, quant_model: Model | None) -> str:
    """'keep-float logits; per-channel conv2' for a `SurgicalPlan` (op names from model B)."""
    groups: dict[str, list[str]] = {}
    for e in plan.edits:
        try:
            short = EDIT_BY_KEY[edit_choice_of(e.kind, e.calibration)].short
        except ValueError:
            short = e.kind if e.calibration is None else f"{e.kind}-{e.calibration}"
        ops = e.ops[:1] if e.kind in ("equalize", "relu6_equalize") else e.ops  # named by its producer (the consumer is found)
        names = [layer_name(quant_model, i) if quant_model is not None else f"op {i}" for i in ops] or [e.pattern]
        groups.setdefault(short, []).extend(n for n in names if n not in groups.get(short, []))
    return "; ".join(f"{k} {', '.join(v)}" for k, v in groups.items()) or "no edits"


def edit_marks(plan: SurgicalPlan) -> dict[int, str]:
    """B op index -> the edit label, for `delta.version_delta(edits=...)`. An equalized producer's
    output is scaled per channel against A's by design, which its label says (the comparison takes
    A's output ÷ s as its reference: `compare/equalized.py`)."""
    out: dict[int, str] = {}
    for e in plan.edits:
        for k, i in enumerate(e.ops):
            out[i] = EQUALIZED_PRODUCER if e.kind in ("equalize", "relu6_equalize") and k == 0 else edit_label(e.kind, e.calibration)
    return out


EQUALIZED_PRODUCER = "equalized (output ÷ s)"


def logits_objective(qm: Model) -> str | None:
    """`op:INDEX` of the op feeding a SOFTMAX / LOGISTIC that makes a graph output (through
    QUANTIZE / DEQUANTIZE), or None. A surgical edit keeps every tensor's parameters, and those
    outputs have fixed ones (1/256), so their SQNR is capped: Suggest measures the logits instead."""
    sg = qm.main
    producers = sg.producers()
    for t in sg.outputs:
        op = producers.get(t)
        while op is not None and op.type in BOUNDARY_OPS:
            op = producers.get(op.inputs[0])
        if op is not None and op.type in PROBABILITY_OPS:
            feeder = producers.get(op.inputs[0])
            while feeder is not None and feeder.type in BOUNDARY_OPS:
                feeder = producers.get(feeder.inputs[0])
            if feeder is not None:
                return f"op:{feeder.index}"
    return None
