"""One table of what the TFLite quantization spec and LiteRT's kernels say about each builtin op.

Every question "is this a weight op / must it keep its input's scale / is its output grid fixed /
can we recompute it / does LiteRT run it in 16x8 / is it worth suggesting" is answered here, so
the audit, op math, the comparison, the surgical edits and Suggest cannot disagree (they kept
their own lists before: four weight-op lists with three contents, two suggest-skip lists). So are
the categories the analyses look for (activations, class scores, concatenations, the ops a path is
followed through, control flow): no op-name list lives outside this module (tests/core/tflite/test_op_facts.py).
Sources: the TFLite int8 quantization spec (weights symmetric per output channel, same-scale ops,
fixed output params), LiteRT's reference kernels (activations.cc Prepare, the 16x8 kernels,
TFLITE_SINGLE_ROUNDING of FULLY_CONNECTED). `tests/core/tflite/test_op_facts.py` pins them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OpRoles:
    """Input positions of a weighted op and the output- and input-channel dimensions of its weights."""

    activation: int
    weights: int
    bias: int | None
    channel_dim: int | None  # expected quantized_dimension of per-channel weights
    input_dim: int | None = None  # the dimension of its weights that reads the input's channels (last,
    # so the weights have input_dim + 1 dimensions); equal to channel_dim for a depthwise op, whose
    # columns read input channel k // multiplier. None: not used by any rule (no consumer of equalize)

    @property
    def grouped(self) -> bool:
        """Each weight column reads one input channel (depthwise): input and output channels share a dimension."""
        return self.input_dim is not None and self.input_dim == self.channel_dim


# (input dtype or "*", output dtype) -> (scale, zero point) the kernel requires (activations.cc Prepare).
FixedOutputs = tuple[tuple[tuple[str, str], tuple[float, int]], ...]


@dataclass(frozen=True, slots=True)
class OpFacts:
    name: str
    weights: OpRoles | None = None  # positions follow the builtin op definitions
    same_scale: bool = False  # int8/int16 kernels copy integers: output (scale, zp) = input's
    fixed_outputs: FixedOutputs = ()
    spec_kernel: bool = False  # quantmath.integer_kernels recomputes its int8 output from the spec
    single_rounding: bool = False  # its LiteRT kernel rounds the 64-bit product once
    per_channel_sqnr: bool = False  # output channels (last dim) are worth an SQNR each
    surgical_weights: bool = False  # per-channel, bias correction and a16w8 edit its weights (input 1, bias 2)
    a16w8: bool = False  # LiteRT has an int16-activation (16x8) kernel for it
    shape_only: bool = False  # moves or computes shapes, no arithmetic on values
    boundary: bool = False  # QUANTIZE / DEQUANTIZE: converts between float and integer
    reshape: bool = False  # keeps every value in order, only the shape changes
    concat: bool = False  # lays its inputs side by side along an axis
    activation: bool = False  # what a Keras layer's `activation=` becomes, after the layer's own op
    class_score: bool = False  # its output is a vector of class scores (probabilities or log-probabilities)
    weight_decoder: bool = False  # float16 / sparse constant weights are stored behind it
    control_flow: bool = False  # branches or loops over other subgraphs
    stateful: bool = False  # runs an init subgraph once or reads/writes resource variables
    unquantized_int_output: bool = False  # integer output that is no quantized value (shape, cast, index)
    output_clamp: tuple[float, float] | None = None  # a clamping activation op's float output bounds

    @property
    def suggest_skip(self) -> bool:
        """Not a Suggest candidate: nothing to gain from editing it (boundary, shape-only). Probability
        outputs (SOFTMAX/LOGISTIC) stay candidates on both routes: keeping one float removes its fixed
        1/256 grid from the model output (the surgical route skipped them, the quantizer route not)."""
        return self.boundary or self.shape_only


_CONV = OpRoles(0, 1, 2, 0, input_dim=3)  # OHWI
_SAME = ("RESHAPE", "SQUEEZE", "EXPAND_DIMS", "TRANSPOSE", "MAX_POOL_2D", "AVERAGE_POOL_2D", "CONCATENATION",
         "GATHER", "GATHER_ND", "SLICE", "STRIDED_SLICE", "SPLIT", "SPLIT_V", "PAD", "PADV2", "SPACE_TO_DEPTH",
         "DEPTH_TO_SPACE", "BATCH_TO_SPACE_ND", "SPACE_TO_BATCH_ND", "RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR",
         "MAXIMUM", "MINIMUM", "PACK", "UNPACK", "TILE", "BROADCAST_TO", "REDUCE_MAX", "REDUCE_MIN")  # fmt: skip
_SHAPE_ONLY = ("SHAPE", "RESHAPE", "SQUEEZE", "STRIDED_SLICE", "PACK")
_A16W8 = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD", "SUB", "MUL", "MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE",
          "LOGISTIC", "TANH", "SOFTMAX")  # int16 kernels on the fixed 1/32768 grid (tests/core/requantize/test_a16w8_fixed_ops.py;
# MEAN's int16 kernel runs too, but the edit of MEAN alone cost 3.3 dB of output there: not offered)
_CATEGORIES: dict[str, tuple[str, ...]] = {  # boolean fields not derived from the tables above
    "reshape": ("RESHAPE", "SQUEEZE", "EXPAND_DIMS"),
    "concat": ("CONCATENATION", "PACK"),
    "activation": ("LOGISTIC", "TANH", "RELU", "RELU6", "HARD_SWISH", "SOFTMAX"),
    "class_score": ("SOFTMAX", "LOGISTIC", "LOG_SOFTMAX"),
    "weight_decoder": ("DEQUANTIZE", "DENSIFY"),
    "control_flow": ("WHILE", "IF"),
    "stateful": ("CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"),
    "unquantized_int_output": ("SHAPE", "CAST", "ARG_MAX", "ARG_MIN"),
}
_CLAMPS = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0), "RELU_0_TO_1": (0.0, 1.0)}
_FIXED: dict[str, FixedOutputs] = {
    "LOGISTIC": ((("*", "int8"), (1 / 256, -128)), (("*", "int16"), (1 / 32768, 0))),
    "SOFTMAX": ((("*", "int8"), (1 / 256, -128)), (("int8", "int16"), (1 / 65536, -32768)), (("*", "int16"), (1 / 32768, 0))),
    "TANH": ((("*", "int8"), (1 / 128, 0)), (("*", "int16"), (1 / 32768, 0))),
    "L2_NORMALIZATION": ((("*", "int8"), (1 / 128, 0)),),
    "LOG_SOFTMAX": ((("*", "int8"), (16 / 256, 127)),),
}  # fmt: skip
_WEIGHTS = {
    "CONV_2D": _CONV,
    "DEPTHWISE_CONV_2D": OpRoles(0, 1, 2, 3, input_dim=3),  # 1HW(C·multiplier)
    "FULLY_CONNECTED": OpRoles(0, 1, 2, 0, input_dim=1),  # (out, in)
    "TRANSPOSE_CONV": OpRoles(2, 1, 3, 0),  # inputs: output_shape, weights, input, bias
    "CONV_3D": OpRoles(0, 1, 2, 4),
    "BATCH_MATMUL": OpRoles(0, 1, None, None),
}


def _build() -> dict[str, OpFacts]:
    names = {*_SAME, *_SHAPE_ONLY, *_A16W8, *_FIXED, *_WEIGHTS, *_CLAMPS, "QUANTIZE", "DEQUANTIZE", "ADD", "SUB"}
    names.update(*_CATEGORIES.values())
    return {
        n: OpFacts(
            n,
            weights=_WEIGHTS.get(n),
            same_scale=n in _SAME,
            fixed_outputs=_FIXED.get(n, ()),
            spec_kernel=n in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "ADD"),
            single_rounding=n == "FULLY_CONNECTED",
            per_channel_sqnr=n in _WEIGHTS and n != "BATCH_MATMUL",
            surgical_weights=n in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"),
            a16w8=n in _A16W8,
            shape_only=n in _SHAPE_ONLY,
            boundary=n in ("QUANTIZE", "DEQUANTIZE"),
            output_clamp=_CLAMPS.get(n),
            **{flag: n in ops for flag, ops in _CATEGORIES.items()},
        )
        for n in sorted(names)
    }


FACTS: dict[str, OpFacts] = _build()


def facts(op_type: str) -> OpFacts:
    """The facts of a builtin op (an op nobody lists, or a custom op: all False)."""
    f = FACTS.get(op_type)
    return f if f is not None else OpFacts(op_type)


def _where(flag: str) -> frozenset[str]:
    return frozenset(n for n, f in FACTS.items() if getattr(f, flag))


WEIGHTED_OPS: dict[str, OpRoles] = {n: f.weights for n, f in FACTS.items() if f.weights is not None}
SAME_SCALE_OPS = _where("same_scale")
SPEC_OPS = _where("spec_kernel")
PER_CHANNEL_SQNR_OPS = _where("per_channel_sqnr")
SURGICAL_WEIGHT_OPS = _where("surgical_weights")
A16W8_OPS = _where("a16w8")
SHAPE_ONLY_OPS = _where("shape_only")
BOUNDARY_OPS = _where("boundary")
SUGGEST_SKIP_OPS = _where("suggest_skip")
RESHAPE_OPS = _where("reshape")
CONCAT_OPS = _where("concat")
ACTIVATION_OPS = _where("activation")  # the Keras/QAT route skips their outputs for a layer's pre-activation
# task_kind: an output they produce is classification; PROBABILITY_OPS below is narrower (int8 fixed at 1/256).
CLASS_SCORE_OPS = _where("class_score")
WEIGHT_DECODER_OPS = _where("weight_decoder")
CONTROL_FLOW_OPS = _where("control_flow")  # the quantizer keeps them float
STATEFUL_OPS = _where("stateful")  # runtime.model_state: the model keeps state across invoke()
NOT_EXTRACTABLE_OPS = CONTROL_FLOW_OPS | STATEFUL_OPS  # need other subgraphs or variables to run
UNQUANTIZED_INT_OPS = _where("unquantized_int_output")  # the audit accepts integer tensors without quantization there
OP_CLAMPS: dict[str, tuple[float, float]] = {n: f.output_clamp for n, f in FACTS.items() if f.output_clamp is not None}
# Keras layers pair through the activation op the converter put after them (keras/naming).
FOLLOWED_ACTIVATION_OPS = ACTIVATION_OPS | CLASS_SCORE_OPS
# Ops whose kernel (weights) is input 1 (the Keras/QAT route reads it there): every weighted op today.
WEIGHT_OPS = frozenset(n for n, r in WEIGHTED_OPS.items() if r.weights == 1)
EQUALIZE_OPS = SURGICAL_WEIGHT_OPS  # equalize scales their weights (input 1) and bias (2) like the surgical edits
# ADD and SUB share LiteRT's two-input rescale (both inputs to 2·max(S1, S2), add.cc / sub.cc).
ADD_SUB_OPS = frozenset({"ADD", "SUB"})
# Hybrid convolutions: per-channel weights mean asymmetric input quantization (conv.cc EvalHybridPerChannel),
# whatever their asymmetric_quantize_inputs option says.
HYBRID_CONV_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D"})

# Paths an analysis looks through. Each caller kept its own list before; the contents differ, so each
# keeps its meaning under its own name (unifying them would change what the analyses find).
PASS_THROUGH_OPS = BOUNDARY_OPS | RESHAPE_OPS  # concat_layout: a slice's producer through requantization and reshapes
REQUANTIZE_PATH_OPS = PASS_THROUGH_OPS - {"DEQUANTIZE"}  # audit_mixed: an input's own integer grid (stops at float)
SLICE_PATH_OPS = PASS_THROUGH_OPS | SHAPE_ONLY_OPS  # diagnosis: from a concatenated slice to its producer
CLASS_SCORE_PATH_OPS = frozenset({"DEQUANTIZE", "QUANTIZE", "RESHAPE", "SQUEEZE"})  # task_kind (no EXPAND_DIMS)
OUTPUT_CONCAT_PATH_OPS = frozenset({"DEQUANTIZE", "QUANTIZE", "RESHAPE"})  # concat_layout: an output to its concatenation

# Probability outputs: int8 output fixed at scale 1/256, zero point -128 (SOFTMAX, LOGISTIC).
PROBABILITY_OPS = frozenset(n for n, f in FACTS.items() if (("*", "int8"), (1 / 256, -128)) in f.fixed_outputs)


def fixed_output(op_type: str, in_dtype: str, out_dtype: str) -> tuple[float, int] | None:
    """Output (scale, zero_point) a kernel requires for these dtypes; None when free."""
    for (i, o), params in facts(op_type).fixed_outputs:
        if o == out_dtype and i in ("*", in_dtype):
            return params
    return None


def op_label(op_index: int, op_type: str, tensor_name: str) -> str:
    """How text names one op of a model: 'op 19 ADD (block_2/add)': its index, type and output
    tensor, shortened to the first of the names the converter fused with ';'."""
    short = tensor_name.split(";")[0]
    return f"op {op_index} {op_type} ({short})" if short else f"op {op_index} {op_type}"
