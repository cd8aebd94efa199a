"""The metrics a graph can be coloured by, in a module of its own that imports nothing: the
command line builds its parser (`--metric` choices) without loading numpy or LiteRT."""

METRICS = ("sqnr", "isolated", "worst_channel", "clip", "range_use", "cause")
