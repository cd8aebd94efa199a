"""The transformer family of the diagnosis zoo: a small encoder trained at build time on the zoo's
digits (`diagnosis_zoo.digits`: each 16x16 image is 16 tokens, its rows), quantized by
litert-quantizer (`static_wi8_ai8`, int8 activations and weights) whose first layer norm's MEAN
was calibrated too narrow.

The encoder: rows -> Dense(32) embedding -> [layer norm -> 2-head attention -> add -> layer norm
-> ReLU feed-forward -> add] -> layer norm -> flatten -> dense -> softmax. The converter writes each
Keras layer norm as MEAN (the token's mean), SQUARED_DIFFERENCE, MEAN (the variance), RSQRT...

The plant: after training, the embedding's bias is raised by OFFSET on every feature. Every reader
of the residual stream is a layer norm (LN(x + c) = LN(x)) or a residual add, so the float
function is unchanged (Keras outputs before and after differ by ~1e-6), while each token's mean
moves to ~OFFSET. The quantizer is calibrated on 64 training images, then the first layer norm's
mean (`ln0a .../moments/mean`) gets its calibrated range cut to CUT of itself: the int8 MEAN clips
every token's mean, the centred values keep an offset of ~0.6 (about one standard deviation), and
held-out accuracy drops from ~98 % to ~75 %. Everything else is the quantizer's own calibration.
`tr_unplanted_int8`: the same quantization without the cut; `tr_converter_int8`: the TF
converter's full-integer twin (float I/O) on the same 64 images. Neither is a dependable healthy
twin: what blame measures on them depends on the samples. On the first 150 held-out digits the
litert-quantizer twin's output FULLY_CONNECTED clips 10.7 % of the logits (re-calibrated: +11.8 dB)
and the converter's op 10 clips (+4.1 dB, 40 of 58 layers then inherit from it); on all 300, the
litert-quantizer twin's int8 input clips (+2.3 dB) and the converter's carries no cause.
Built once into .fixture-cache under a key of its own (this file and the digits it trains on).
"""

from __future__ import annotations

import hashlib
import inspect
from pathlib import Path

import numpy as np

from tests.helpers import diagnosis_zoo as zoo
from tests.helpers.cache import cached_models

ZOO = ("tr_float", "tr_int8", "tr_unplanted_int8", "tr_converter_int8")
D_MODEL, EPOCHS = 32, 20
OFFSET = 3.0  # added to the embedding's bias: each token's mean moves there, the float function stays
CUT = 0.75  # the first layer norm's mean: its calibrated range scaled by this (it clips every token's mean)
PLANTED = ("ln0a", "moments/mean")  # the quantizer's statistics key of the planted tensor contains / ends with these


def keras_encoder(tf):
    L = tf.keras.layers
    inp = L.Input((zoo.SIZE, zoo.SIZE, 1), batch_size=1, name="image")
    x = L.Reshape((zoo.SIZE, zoo.SIZE), name="rows")(inp)
    x = L.Dense(D_MODEL, name="embed")(x)
    h = L.LayerNormalization(name="ln0a")(x)
    a = L.MultiHeadAttention(num_heads=2, key_dim=16, name="attn0")(h, h)
    x = L.Add(name="res0a")([x, a])
    h = L.LayerNormalization(name="ln0b")(x)
    h = L.Dense(2 * D_MODEL, activation="relu", name="ff0a")(h)
    h = L.Dense(D_MODEL, name="ff0b")(h)
    x = L.Add(name="res0b")([x, h])
    x = L.LayerNormalization(name="ln_final")(x)
    x = L.Flatten(name="flat")(x)
    x = L.Dense(10, name="logits")(x)
    return tf.keras.Model(inp, L.Softmax(name="probs")(x))


def _build() -> dict[str, bytes]:
    tf = zoo._tf()
    from litert_quantizer import Quantizer, recipe

    from tests.helpers.fixture_models import convert

    xt, yt, _, _ = zoo.digits()
    km = keras_encoder(tf)
    steps = EPOCHS * int(np.ceil(len(xt) / 32))
    km.compile(tf.keras.optimizers.Adam(tf.keras.optimizers.schedules.CosineDecay(2e-3, steps, alpha=0.05)),
               "sparse_categorical_crossentropy")  # fmt: skip
    km.fit(xt, yt, epochs=EPOCHS, batch_size=32, verbose=0)
    embed = km.get_layer("embed")
    w, b = embed.get_weights()
    embed.set_weights([w, b + OFFSET])
    fb = convert(km, "float")
    rng = np.random.default_rng(zoo.SEED)
    cal = xt[rng.choice(len(xt), 64, replace=False)]
    q = Quantizer(bytearray(fb), recipe.static_wi8_ai8())
    stats = q.calibrate({"serving_default": [{"image": cal[i : i + 1]} for i in range(len(cal))]})
    unplanted = bytes(q.quantize(stats).quantized_model)
    key = next(k for k in stats if PLANTED[0] in k and k.endswith(PLANTED[1]))
    stats[key] = {name: np.asarray(v) * CUT for name, v in stats[key].items()}
    planted = bytes(q.quantize(stats).quantized_model)
    rep = lambda: ([cal[i : i + 1]] for i in range(len(cal)))  # noqa: E731
    return {"tr_float": fb, "tr_int8": planted, "tr_unplanted_int8": unplanted, "tr_converter_int8": convert(km, "int8", rep)}


def models(root: Path) -> dict[str, Path]:
    import litert_quantizer
    import tensorflow as tf

    data = inspect.getsource(zoo.digits) + repr((zoo.SIZE, zoo.SEED, zoo.HELD_OUT, zoo.GAIN))  # the images it trains on
    key = hashlib.sha256(Path(__file__).read_bytes() + data.encode() + tf.__version__.encode()
                         + str(getattr(litert_quantizer, "__version__", "")).encode())  # fmt: skip
    folder = root / f"zoo-transformer-{key.hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    return cached_models({n: folder / f"{n}.tflite" for n in ZOO}, _build)
