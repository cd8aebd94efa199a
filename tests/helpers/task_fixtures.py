"""A classifier trained on a synthetic, learnable data set, so accuracy means something.

Each of 4 classes is a fixed smooth colour pattern plus noise; images are stored as PNG files in
class subfolders (folder name = class name) and the model sees them scaled to [-1, 1].
Also builds a deliberately broken int8 twin: one layer's output scale multiplied by 8.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from tests.helpers.cache import cached_models

CLASSES = ("circle", "stripes", "corner", "ring")
SIZE = 32
BROKEN_LAYER = "conv2"  # the layer whose output scale is multiplied by 8 in the broken model


def _patterns() -> np.ndarray:
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / (SIZE - 1) * 2 - 1
    r = np.sqrt(xx**2 + yy**2)
    pats = np.stack(
        [
            np.stack([np.exp(-(r**2) * 4)] * 3, -1) * [1.0, 0.3, 0.3],
            np.stack([np.sin(xx * 9)] * 3, -1) * [0.3, 1.0, 0.3],
            np.stack([(xx > 0.2) & (yy > 0.2)] * 3, -1) * [0.3, 0.3, 1.0],
            np.stack([np.exp(-((r - 0.6) ** 2) * 30)] * 3, -1) * [1.0, 1.0, 0.2],
        ]
    )
    return (pats * 2 - 1).astype(np.float32)  # [-1, 1]


def make_dataset(n: int, seed: int, noise: float = 2.2) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, len(CLASSES), n)
    x = _patterns()[labels] + rng.normal(0, noise, (n, SIZE, SIZE, 3)).astype(np.float32)
    return np.clip(x, -1, 1).astype(np.float32), labels.astype(np.int64)


def to_uint8(x: np.ndarray) -> np.ndarray:
    return np.round((x + 1) * 127.5).clip(0, 255).astype(np.uint8)


def folder_name(label: int) -> str:
    """Class folders sort in label order (class indices follow sorted folder names)."""
    return f"{label}_{CLASSES[label]}"


def write_image_folder(root: Path, per_class: int = 15, seed: int = 99) -> Path:
    from PIL import Image

    x, y = make_dataset(per_class * len(CLASSES) * 3, seed)
    counts = {c: 0 for c in range(len(CLASSES))}
    for img, lab in zip(x, y, strict=True):
        if counts[int(lab)] >= per_class:
            continue
        d = root / folder_name(int(lab))
        d.mkdir(parents=True, exist_ok=True)
        Image.fromarray(to_uint8(img)).save(d / f"{counts[int(lab)]:03d}.png")
        counts[int(lab)] += 1
    return root


def _train_and_convert() -> dict[str, bytes]:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow as tf

    from tests.helpers.fixture_models import convert

    tf.keras.utils.set_random_seed(11)
    L = tf.keras.layers
    inp = L.Input((SIZE, SIZE, 3), name="image")
    x = L.Conv2D(8, 3, strides=2, padding="same", activation="relu", name="conv1")(inp)
    x = L.Conv2D(16, 3, strides=2, padding="same", activation="relu", name=BROKEN_LAYER)(x)
    x = L.Conv2D(16, 3, padding="same", activation="relu", name="conv3")(x)
    x = L.GlobalAveragePooling2D(name="gap")(x)
    x = L.Dense(len(CLASSES), name="logits")(x)
    out = L.Softmax(name="probs")(x)
    km = tf.keras.Model(inp, out)
    km.compile(optimizer=tf.keras.optimizers.Adam(3e-3), loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    xt, yt = make_dataset(800, seed=1)
    km.fit(xt, yt, epochs=4, batch_size=32, verbose=0)
    xc, _ = make_dataset(64, seed=2)

    def rep():
        for i in range(len(xc)):
            yield [xc[i : i + 1]]

    out = {"cls_float": convert(km, "float"), "cls_int8": convert(km, "int8", rep)}
    out["cls_int8_broken"] = break_layer_scale(out["cls_int8"], BROKEN_LAYER, 8.0)
    return out


def break_layer_scale(data: bytes, layer: str, factor: float) -> bytes:
    """Multiply the weight scales of the first op whose output name mentions `layer`.

    (Scaling an activation's own scale only loses precision: producer and consumer both use
    it. Scaling the weights' scale makes the kernel compute outputs `factor` times too large.)
    """
    from ai_edge_litert.tools import flatbuffer_utils as fu

    m = fu.convert_bytearray_to_object(bytearray(data))
    sg = m.subgraphs[0]
    for op in sg.operators:
        t = sg.tensors[op.outputs[0]]
        if layer in t.name.decode() and len(op.inputs) > 1:
            w = sg.tensors[op.inputs[1]]
            if w.quantization is not None and w.quantization.scale is not None:
                w.quantization.scale = [s * factor for s in w.quantization.scale]
                return bytes(fu.convert_object_to_bytearray(m))
    raise KeyError(layer)


class TaskFixtures:
    def __init__(self, root: Path) -> None:
        key = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
        self.dir = root / f"task-{key}"
        self.dir.mkdir(parents=True, exist_ok=True)

    def models(self) -> dict[str, Path]:
        names = ("cls_float", "cls_int8", "cls_int8_broken")
        return cached_models({n: self.dir / f"{n}.tflite" for n in names}, _train_and_convert)

    def image_folder(self) -> Path:
        root = self.dir / "images"
        if not (root / folder_name(len(CLASSES) - 1)).exists():
            write_image_folder(root)
        return root

    def npz(self, n: int = 40) -> Path:
        p = self.dir / f"labelled_{n}.npz"
        if not p.exists():
            x, y = make_dataset(n, seed=7)
            tmp = self.dir / f"labelled_{n}.tmp.npz"
            np.savez(tmp, image=x, labels=y)
            os.replace(tmp, p)
        return p
