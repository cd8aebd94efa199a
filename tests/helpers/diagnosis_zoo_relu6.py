"""The ReLU6 depthwise-separable family of the diagnosis zoo (MobileNetV2's activation): the
digits CNN of `diagnosis_zoo._separable` with ReLU6 on every conv, whose depthwise output channels
spread over 2 or 3 decades, converted with per-tensor weights (Nagel et al. 2019's failure, with
the activation that blocks equalize).

Built so that the plant preserves the float function and ReLU6 rarely reaches 6, the case DFQ's
ReLU6 -> ReLU recipe is for: the network is trained with ReLU (the zoo's ReLU twins' network,
flatten head and training: float ~98 % held out), then each conv's output channel i is divided
by g_i = max(1, p99.9_i / TARGET) (p99.9: the 99.9th percentile of that channel on the training
images) and the next layer's input weights for channel i multiplied by g_i (ReLU is positively homogeneous: the function is unchanged), so its
activations stay below 6 on 99.9 % of the training values; only then does ReLU6 replace ReLU (the
same weights). The spread is planted as in the ReLU twins (`diagnosis_zoo.plant_spread`, factors
<= 1: relu6(f·x) = f·relu6(x) wherever x <= 6). Built once into .fixture-cache, under a key of
its own (building it does not rebuild the rest of the zoo).

`trained(root)`, for the diagnosis table only: the same network trained with ReLU6 itself (it
uses the clamp), 2 decades planted. `r6t`: factors in the zoo's fixed shuffle (the plant moves a
small channel's clamp from 6 to 6/f, so the float function changes a little where it clamped;
about 0.5 % of the depthwise values still reach 6: the recipe applies, its float change measured).
`r6s`: the factors ranked so the channels that clamp most keep f ~ 1 (they still reach 6 on more
than 1 % of the values: the recipe is refused, with the reason).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from tests.helpers import diagnosis_zoo as zoo
from tests.helpers.cache import cached_models

ZOO = ("r6dw2_float", "r6dw2_int8", "r6dw3_float", "r6dw3_int8")
CHAIN = ("stem", "dw0", "pw0", "dw1", "pw1", "dw2", "pw2", "logits")
PERCENTILE, TARGET = 99.9, 5.0


def normalize(tf, km, x: np.ndarray) -> None:
    """Divide each conv's output channel by max(1, its PERCENTILE-th percentile / TARGET) on `x`,
    the next layer's input weights multiplied back (exact under ReLU)."""
    outs = tf.keras.Model(km.input, [km.get_layer(n).output for n in CHAIN[:-1]]).predict(x, verbose=0)
    for name, nxt, v in zip(CHAIN[:-1], CHAIN[1:], outs, strict=True):
        g = np.maximum(1.0, np.percentile(v.reshape(-1, v.shape[-1]), PERCENTILE, axis=0) / TARGET).astype(np.float32)
        layer, reader = km.get_layer(name), km.get_layer(nxt)
        w, b = layer.get_weights()
        layer.set_weights([w / (g[None, None, :, None] if name.startswith("dw") else g), b / g])
        wn, bn = reader.get_weights()
        if nxt == "logits":  # after a flatten: the dense layer's input rows run (row, column, channel), channel fastest
            reader.set_weights([wn * np.tile(g, wn.shape[0] // g.size)[:, None], bn])
        else:
            reader.set_weights([wn * g[None, None, :, None], bn])


def _build() -> dict[str, bytes]:
    tf = zoo._tf()
    from tests.helpers.fixture_models import convert

    xt, yt, _, _ = zoo.digits()
    rng = np.random.default_rng(zoo.SEED)
    cal = xt[rng.choice(len(xt), 64, replace=False)]

    def rep(data):
        return lambda: ([data[i : i + 1]] for i in range(len(data)))

    out: dict[str, bytes] = {}
    trained = zoo._separable(tf, "relu", head="flat", init="he_normal")  # the ReLU twins' network and training
    zoo._fit_shifted(trained, xt, yt, zoo.EPOCHS)
    normalize(tf, trained, xt)
    sep = zoo._separable(tf, "relu6", head="flat", init="he_normal")
    sep.set_weights(trained.get_weights())
    base = sep.get_weights()
    for d in (2, 3):
        sep.set_weights(base)
        zoo.plant_spread(sep, float(d))
        out[f"r6dw{d}_float"] = convert(sep, "float")
        out[f"r6dw{d}_int8"] = convert(sep, "int8_per_tensor", rep(cal))
    return out


def plant_ranked(tf, km, decades: float, x: np.ndarray) -> None:
    """`diagnosis_zoo.plant_spread` with the largest factors given to the channels that clamp most on `x`."""
    for k in range(3):
        dw, pw = km.get_layer(f"dw{k}"), km.get_layer(f"pw{k}")
        v = tf.keras.Model(km.input, dw.output).predict(x, verbose=0)
        key = np.mean(v >= 6 - 1e-4, axis=(0, 1, 2)) * 1e3 + v.mean(axis=(0, 1, 2)) / 6
        f = np.empty(v.shape[-1], np.float32)
        f[np.argsort(-key)] = np.sort(zoo.spread(v.shape[-1], decades))[::-1]
        wd, bd = dw.get_weights()
        dw.set_weights([wd * f[None, None, :, None], bd * f])
        wp, bp = pw.get_weights()
        pw.set_weights([wp / f[None, None, :, None], bp])


def _build_trained() -> dict[str, bytes]:
    tf = zoo._tf()
    from tests.helpers.fixture_models import convert

    xt, yt, _, _ = zoo.digits()
    rng = np.random.default_rng(zoo.SEED)
    cal = xt[rng.choice(len(xt), 64, replace=False)]
    rep = lambda: ([cal[i : i + 1]] for i in range(len(cal)))  # noqa: E731
    sep = zoo._separable(tf, "relu6")
    zoo._fit(sep, xt, yt, 30)
    base = sep.get_weights()
    zoo.plant_spread(sep, 2.0)
    out = {"r6t_float": convert(sep, "float"), "r6t_int8": convert(sep, "int8_per_tensor", rep)}
    sep.set_weights(base)
    plant_ranked(tf, sep, 2.0, xt[:300])
    out |= {"r6s_float": convert(sep, "float"), "r6s_int8": convert(sep, "int8_per_tensor", rep)}
    return out


def trained(root: Path) -> dict[str, Path]:
    """The ReLU6-trained twins (`r6t_*`, `r6s_*`; see the module docstring)."""
    return cached_models({n: _folder(root) / f"{n}.tflite" for n in ("r6t_float", "r6t_int8", "r6s_float", "r6s_int8")},
                         _build_trained)  # fmt: skip


def _folder(root: Path) -> Path:
    import tensorflow as tf

    here = Path(__file__)
    key = hashlib.sha256(here.read_bytes() + (here.parent / "diagnosis_zoo.py").read_bytes() + tf.__version__.encode())
    folder = root / f"zoo-relu6-{key.hexdigest()[:12]}"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def models(root: Path) -> dict[str, Path]:
    return cached_models({n: _folder(root) / f"{n}.tflite" for n in ZOO}, _build)
