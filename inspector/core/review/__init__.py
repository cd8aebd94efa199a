"""Reviewing a pair: the audit against the TFLite quantization rules, the HTML/JSON/CSV
report, the Model Explorer overlay, and the model summary of `info`.

May import everything from `requantize` down; not `viewdata` or `state`.
"""
