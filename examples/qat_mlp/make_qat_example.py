"""A worked quantization-aware-training (QAT) example for the README's Keras section.

The model of the classic question: Input 784 -> Dense 256 relu -> Dense 128 relu -> Dense 10
softmax. It is trained briefly as a float model, wrapped with tfmot's `quantize_model`,
fine-tuned, and exported to int8 the way the tfmot guide does it. Everything it writes goes into
OUT (default `qat_example/`):

    float_model.h5       the float model (before QAT): `convert` makes its TFLite twins
    qat_model.h5         the QAT model (QuantizeLayer / QuantizeWrapperV2 with their min/max)
    qat_saved_model/     the same QAT model as a SavedModel folder
    qat_int8.tflite      the int8 export of the QAT model (TFLiteConverter, Optimize.DEFAULT)
    val.npz              held-out samples: `pixels` (N x 784 float32 in [0, 1], named after the
                         model's input layer) and `labels` (N integers, the true digits)
    qat_example.json     the data source, the seeds and the accuracies measured here

Data: the 1,797 handwritten 8x8 digits that scikit-learn ships (no download), scaled up to 28x28
by nearest neighbour; 300 digits are held out (never trained on) for val.npz. scikit-learn is
part of the example's install (`pip install scikit-learn`); without it the script stops in one
line: synthetic stand-ins were separated perfectly (float, QAT and int8 all 1.000), leaving
nothing to inspect. Deterministic: seeds fixed and TensorFlow's op determinism on.

tfmot 0.8 works with tf-keras (Keras 2) only: TF_USE_LEGACY_KERAS=1 must be set before
TensorFlow is first imported (this script sets it itself; your own training script must too).

    TF_USE_LEGACY_KERAS=1 python examples/qat_mlp/make_qat_example.py [--out qat_example]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ["TF_USE_LEGACY_KERAS"] = "1"  # before TensorFlow is imported: tfmot needs tf-keras
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import warnings  # noqa: E402

import numpy as np  # noqa: E402

# tf-keras calls .h5 "legacy" (it is what tfmot's QAT models reload from reliably) and the
# converter warns about input statistics a float-input QAT export does not need.
warnings.filterwarnings("ignore", message="You are saving your model as an HDF5 file")
warnings.filterwarnings("ignore", message="Statistics for quantized inputs were expected")

HELD_OUT = 300
SEED = 0


NEEDS_SKLEARN = ("make_qat_example.py: needs scikit-learn for its data (the 1,797 handwritten digits it ships, "
                 "no download): pip install scikit-learn")


def digits() -> tuple[np.ndarray, np.ndarray, str]:
    """(N x 784 float32 in [0, 1], N labels, a description of the source); SystemExit (one line,
    exit 2) without scikit-learn."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        print(NEEDS_SKLEARN, file=sys.stderr)
        raise SystemExit(2) from None
    d = load_digits()
    idx = np.arange(28) * 8 // 28  # nearest neighbour 8 -> 28
    x = d.images[:, idx][:, :, idx].reshape(len(d.images), 784) / 16.0
    return x.astype(np.float32), d.target.astype(np.int64), "scikit-learn's 1,797 handwritten 8x8 digits, scaled to 28x28"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="qat_example", help="output folder (default qat_example/)")
    ap.add_argument("--epochs", type=int, default=4, help="float training epochs (QAT fine-tuning: half as many)")
    args = ap.parse_args(argv)
    out = Path(args.out)
    x, y, source = digits()  # before anything is written or TensorFlow is imported
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()

    import tensorflow as tf
    import tensorflow_model_optimization as tfmot
    import tf_keras as keras

    keras.utils.set_random_seed(SEED)
    tf.config.experimental.enable_op_determinism()
    order = np.random.default_rng(SEED).permutation(len(x))
    x, y = x[order], y[order]
    x_train, y_train, x_val, y_val = x[HELD_OUT:], y[HELD_OUT:], x[:HELD_OUT], y[:HELD_OUT]

    L = keras.layers
    inp = keras.Input((784,), name="pixels")
    h = L.Dense(256, activation="relu", name="dense_1")(inp)
    h = L.Dense(128, activation="relu", name="dense_2")(h)
    model = keras.Model(inp, L.Dense(10, activation="softmax", name="probs")(h), name="mlp")
    model.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x_train, y_train, epochs=args.epochs, batch_size=32, verbose=0)
    model.save(out / "float_model.h5")

    qat = tfmot.quantization.keras.quantize_model(model)  # QuantizeLayer + QuantizeWrapperV2 around each Dense
    qat.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    qat.fit(x_train, y_train, epochs=max(1, args.epochs // 2), batch_size=32, verbose=0)
    with tfmot.quantization.keras.quantize_scope():
        qat.save(out / "qat_model.h5")
        qat.save(out / "qat_saved_model")  # no extension: a SavedModel folder

    conv = tf.lite.TFLiteConverter.from_keras_model(qat)  # the tfmot guide's export: int8 from the QAT ranges
    conv.optimizations = [tf.lite.Optimize.DEFAULT]
    (out / "qat_int8.tflite").write_bytes(conv.convert())
    np.savez(out / "val.npz", pixels=x_val, labels=y_val)

    def accuracy(pred: np.ndarray) -> float:
        return float((pred.argmax(1) == y_val).mean())

    from ai_edge_litert.interpreter import Interpreter

    it = Interpreter(model_path=str(out / "qat_int8.tflite"))
    it.allocate_tensors()
    i_in, i_out = it.get_input_details()[0]["index"], it.get_output_details()[0]["index"]
    tfl = []
    for row in x_val:
        it.set_tensor(i_in, row[None])
        it.invoke()
        tfl.append(it.get_tensor(i_out)[0])
    facts = {
        "data": source,
        "train_samples": len(x_train),
        "held_out_samples": HELD_OUT,
        "seed": SEED,
        "accuracy": {"float_model": accuracy(model.predict(x_val, verbose=0)), "qat_model": accuracy(qat.predict(x_val, verbose=0)),
                     "qat_int8_tflite": accuracy(np.array(tfl))},  # fmt: skip
        "versions": {"tensorflow": tf.__version__, "tf_keras": keras.__version__},
        "seconds": round(time.perf_counter() - t0, 1),
    }
    (out / "qat_example.json").write_text(json.dumps(facts, indent=2) + "\n")
    acc = facts["accuracy"]
    print(f"{out}/: float_model.h5, qat_model.h5, qat_saved_model/, qat_int8.tflite, val.npz ({HELD_OUT} held-out digits)")
    print(f"held-out accuracy: float {acc['float_model']:.3f}, QAT {acc['qat_model']:.3f}, int8 .tflite {acc['qat_int8_tflite']:.3f} "
          f"({facts['seconds']} s; data: {source})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
