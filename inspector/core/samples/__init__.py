"""Sample inputs: what a sample is (`spec`), the settings that choose them (`settings`),
and their sources (random by spec, .npy/.npz arrays, folders of images).

May import `tflite` and `quantmath` (and the top-level modules), nothing above them.
"""
