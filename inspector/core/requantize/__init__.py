"""Changing model B: plans, the litert-quantizer route, surgical edits of the quantized
model, checks of what was produced, fixes, versions and their deltas, and suggest.

May import everything from `compare` down; not `review`, `viewdata` or `state`.
"""
