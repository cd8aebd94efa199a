"""Samples from a folder of images: resized to the input's height and width, normalized.

Images directly in the folder have no label; images in subfolders are labelled by subfolder,
classes numbered in sorted order of the subfolder names (the class names are kept).

Normalization (float value from pixel value v in 0..255), first that applies:
1. the `normalization` option: "-1,1" (v/127.5 - 1), "0,1" (v/255), "0,255" (v), or
   "mean=M,std=S" (per channel lists allowed: "mean=123.7/116.3/103.5,std=58.4/57.1/57.4");
2. the model's TFLite metadata (NormalizationOptions of the first input: (v - mean) / std);
3. the default [-1, 1], what MobileNet-style Keras models expect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from inspector.core.errors import InputError
from inspector.core.samples.spec import Sample, SampleSource, input_specs
from inspector.core.tflite.metadata import input_normalization
from inspector.core.tflite.model import Model

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".gif", ".webp", ".tif", ".tiff")
PRESETS = {"-1,1": (127.5, 127.5), "0,1": (0.0, 255.0), "0,255": (0.0, 1.0)}


def parse_normalization(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std) arrays from an option string (see the module doc)."""
    t = text.replace(" ", "")
    if t in PRESETS:
        m, s = PRESETS[t]
        return np.array([m], np.float32), np.array([s], np.float32)
    parts = dict(p.split("=", 1) for p in t.split(",") if "=" in p)
    try:
        mean = np.array([float(v) for v in parts["mean"].split("/")], np.float32)
        std = np.array([float(v) for v in parts["std"].split("/")], np.float32)
    except (KeyError, ValueError):
        raise InputError(
            f"normalization {text!r} is not one of {', '.join(PRESETS)} or 'mean=M,std=S'"
        ) from None
    if np.any(std == 0):
        raise InputError(f"normalization {text!r} has a zero std")
    return mean, std


def list_images(folder: Path) -> tuple[list[tuple[Path, int | None]], tuple[str, ...] | None]:
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES)
    items: list[tuple[Path, int | None]] = [(p, None) for p in files]
    classes = sorted(d.name for d in folder.iterdir() if d.is_dir() and not d.name.startswith("."))
    classes = [c for c in classes if any(p.suffix.lower() in IMAGE_SUFFIXES for p in (folder / c).iterdir())]
    for label, c in enumerate(classes):
        for p in sorted((folder / c).iterdir()):
            if p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES:
                items.append((p, label))
    return items, (tuple(classes) if classes else None)


def image_source(model: Model, folder: Path, count: int | None, seed: int = 0, normalization: str | None = None) -> SampleSource:
    specs = input_specs(model)
    if len(specs) != 1:
        raise InputError(f"an image folder fills one input, but the model has {len(specs)}", str(folder))
    spec = specs[0]
    if len(spec.shape) != 4 or spec.shape[3] not in (1, 3, 4) or not spec.dtype.startswith("float"):
        raise InputError(
            f"input '{spec.name}' ({spec.dtype} {list(spec.shape_signature)}) is not a float NHWC image input",
            str(folder),
        )
    items, classes = list_images(folder)
    if not items:
        raise InputError(f"no images ({', '.join(IMAGE_SUFFIXES)}) in the folder or its subfolders", str(folder))
    if count is not None and count < len(items):  # a seeded subset keeps all classes likely present
        pick = np.sort(np.random.default_rng(seed).choice(len(items), count, replace=False))
        items = [items[i] for i in pick]
    if normalization:
        mean, std = parse_normalization(normalization)
        how = normalization
    else:
        meta = input_normalization(model)
        mean, std = meta if meta is not None else (np.array([127.5], np.float32), np.array([127.5], np.float32))
        how = "model metadata" if meta is not None else "[-1, 1] default"
    _, h, w, c = spec.shape
    names = (spec.name,)

    def make() -> Iterator[Sample]:
        from PIL import Image, UnidentifiedImageError

        for i, (p, label) in enumerate(items):
            try:
                with Image.open(p) as f:
                    im = f.convert("L" if c == 1 else "RGBA" if c == 4 else "RGB")
                    if im.size != (w, h):
                        im = im.resize((w, h), Image.Resampling.BILINEAR)
                    v = np.asarray(im, np.float32).reshape(h, w, c)
            except (OSError, UnidentifiedImageError) as e:
                raise InputError(f"cannot read the image ({e})", str(p)) from e
            x = ((v - mean) / std).astype(np.float32)[None]
            yield Sample(i, str(p.relative_to(folder)), [x], label, names)

    src = SampleSource(len(items), make, f"{len(items)} images from {folder.name} (normalization: {how})", classes)
    return src
