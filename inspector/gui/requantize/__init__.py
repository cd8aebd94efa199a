"""The Requantize tab: the plan, the versions of model B, their deltas, suggest and save."""
