"""Quantization arithmetic: r = S(q - Z), ranges and grids, fixed-point multipliers
(M = S1*S2/S3 -> M0, shift), kernel paths and the integer math of each op, with its explanation.

May import `tflite` (and the top-level errors/progress/writing), nothing above it.
"""
