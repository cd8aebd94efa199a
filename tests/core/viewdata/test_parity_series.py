"""What the runtime parity view draws, from a hand-built result (values known by construction)."""

from __future__ import annotations

import numpy as np

from inspector.core.compare.parity_result import (
    Difference,
    LayerParity,
    OutputParity,
    RuntimeParityResult,
)
from inspector.core.viewdata.parity_series import (
    format_share,
    parity_headline,
    parity_series,
    spec_cells,
)


def _result() -> RuntimeParityResult:
    exact, off = Difference(0.0, 0.0), Difference(0.125, 3.0)
    layers = (
        LayerParity(0, "QUANTIZE", "q", 1, 0.0, 0.0, False),
        LayerParity(2, "CONV_2D", "c", 4, 0.25, 2.0, True, {"reference": exact, "optimized": off}),
        LayerParity(5, "DEQUANTIZE", "d", 7, 0.5, None, False),
    )
    return RuntimeParityResult("m.tflite", ("reference", "optimized"), (1, 1), 3, layers,
                               (OutputParity("out", 7, 0.5, 1.0),), ("reference", "optimized"), True, subgraph=0)  # fmt: skip


def test_series_cells_and_headline():
    r = _result()
    s = parity_series(r)
    np.testing.assert_array_equal(s.op_index, [0, 2, 5])
    np.testing.assert_array_equal(s.differ_pct, [0.0, 25.0, 50.0])
    assert s.max_lsb[1] == 2.0 and np.isnan(s.max_lsb[2]) and s.first == 1
    assert spec_cells(r.layers[1], r.labels) == ("exact", "12.50 %, max 3 LSB")
    assert spec_cells(r.layers[0], r.labels) == ("—", "—")
    assert format_share(0.0) == "0.00 %" and format_share(1e-6) == "< 0.01 %" and format_share(0.0001) == "0.01 %"
    assert parity_headline(r) == ("reference vs optimized, 3 random samples: first divergence at op 2 CONV_2D. "
                                  "output out: 50.00 % differ, max 1 LSB")  # fmt: skip
