"""A detector head in YOLOv8's layout, built with the TF converter at test time: boxes in pixels
(sigmoid x 640) and sigmoid scores per cell of an 8x8 grid, transposed to channels-first and
concatenated on axis 1 into (1, 7, 64) (the concatenation axis is not the last one), and a second
output that PACKs a box coordinate map (pixels) with a score map on a new axis 1 into (1, 2, 8, 8).

`yolo_float` / `yolo_int8` (float I/O). Cached by this file's hash like the other fixtures.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.helpers.cache import cached_models

YOLO_FIXTURES = ("yolo_float", "yolo_int8")


def _build() -> dict[str, bytes]:
    from tests.helpers.fixture_models import _rep_dataset, _tf, convert

    tf = _tf()
    tf.keras.utils.set_random_seed(27)
    L = tf.keras.layers
    inp = L.Input((32, 32, 3), name="image")
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="stem")(inp)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name="neck")(x)
    box = L.Rescaling(640.0, name="box_px")(L.Conv2D(4, 1, activation="sigmoid", name="box_raw")(x))
    score = L.Conv2D(3, 1, activation="sigmoid", name="scores")(x)
    bt = L.Permute((2, 1), name="box_t")(L.Reshape((64, 4), name="box_cells")(box))
    st = L.Permute((2, 1), name="score_t")(L.Reshape((64, 3), name="score_cells")(score))
    head = L.Concatenate(axis=1, name="head")([bt, st])
    bx = L.Reshape((8, 8), name="box_x")(L.Conv2D(1, 1, activation="sigmoid", name="box_x_raw")(x))
    sx = L.Reshape((8, 8), name="score_x")(L.Conv2D(1, 1, activation="sigmoid", name="score_x_raw")(x))
    packed = L.Lambda(lambda ts: tf.stack(ts, axis=1), name="packed")([L.Rescaling(640.0, name="bx_px")(bx), sx])
    km = tf.keras.Model(inp, [head, packed], name="yolo_head")
    rep = _rep_dataset(64, seed=7)
    return {"yolo_float": convert(km, "float"), "yolo_int8": convert(km, "int8", rep)}


def yolo_models(root: Path) -> dict[str, Path]:
    key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    folder = root / f"inside-yolo-{key}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_models({n: folder / f"{n}.tflite" for n in YOLO_FIXTURES}, _build)
