"""Running the LiteRT interpreter: the runner that reads every intermediate tensor,
the probe that says whether a model runs at all, and the worker process that keeps a
runtime crash away from the caller.

May import `tflite` and `quantmath` (and the top-level modules), nothing above them.
"""
