"""Changing model B: plans, the litert-quantizer route, surgical edits of the quantized
model, checks of what was produced, fixes, versions and their deltas, suggest, and the plan
being drafted in the GUI (`draft.PlanDraft`).

May import everything from `compare` down; not `review`, `viewdata` or `state`.
"""
