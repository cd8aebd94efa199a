"""Regenerate the bundled example pair (run with `make examples`; needs TensorFlow).

example_float.tflite  a small float32 CNN (conv, depthwise, residual add, pool, dense, softmax)
example_int8.tflite   its full-int8 twin (float I/O), calibrated on smooth random images
example_inputs.npz    8 sample images, key "image" (the model input's name)
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests"))

from fixture_models import convert, keras_cnn, representative_images  # noqa: E402


def main() -> None:
    km = keras_cnn(seed=7)
    (HERE / "example_float.tflite").write_bytes(convert(km, "float"))
    (HERE / "example_int8.tflite").write_bytes(convert(km, "int8"))
    np.savez(HERE / "example_inputs.npz", image=representative_images(8, seed=42))
    for p in sorted(HERE.glob("example_*")):
        print(f"{p.name:24s} {p.stat().st_size:>8,d} bytes")


if __name__ == "__main__":
    main()
