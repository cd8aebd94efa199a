"""What the views plot, computed here so the GUI only draws: weight histograms and their
grid window, activation histograms, per-layer series, the op math panel's text.

May import every other part of core except `state`.
"""
