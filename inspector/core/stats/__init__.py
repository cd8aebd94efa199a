"""Streaming error statistics: the metric definitions (`metrics`, one definition for every
view, report and test), how each metric is presented (`metric_table`, one row per metric) and
the faster paths that compute the same sums (numpy per tensor, one native call per sample).

May import `tflite` and `quantmath` (and the top-level modules), nothing above them.
"""
