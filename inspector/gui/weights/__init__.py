"""The Weights and Per-channel quantization tabs."""
