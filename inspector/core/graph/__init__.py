"""The graph of a model: the compared subgraph of B as ops (nodes) and tensors (edges), its
layered top-to-bottom layout (igraph's Sugiyama layout), the colour of each op by a metric of a
comparison or by its diagnosed cause, badges, and the SVG drawing the CLI and the report write.

May import everything from `compare` down (`tflite`, `quantmath`, `stats`, `compare`); not
`requantize`, `keras`, `review`, `viewdata` or `state` (those pass in what they know: edited
ops, audit findings).
"""
