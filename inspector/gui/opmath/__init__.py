"""The Op math tab: the integer arithmetic of the selected op of B (computed in core)."""
