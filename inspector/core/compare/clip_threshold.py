"""The one clip-rate threshold: a layer whose share of float values beyond B's representable range
(by more than half a step, `stats.metrics`) exceeds it clips. The diagnosis names the cause with it
(`diagnosis.THRESHOLDS.clip_rate`, measured in tests/core/compare/test_diagnosis.py), the graph centres its
clip colours on it, the layer plot marks clipping above it and the audit warns above it, so a layer
diagnosed clipping is marked clipping everywhere."""

from __future__ import annotations

CLIP_RATE = 0.001  # 0.1 % of the float values
