"""`.litertlm` bundles built at test time with litert-lm-builder (as tests/core/tflite/test_litertlm.py):
system metadata, a SentencePiece tokenizer section, then the two-signature float and int8 models
as TFLite sections 1 and 2."""

from __future__ import annotations

from pathlib import Path


def build_bundle(folder: Path, float_model: Path, quant_model: Path, name: str = "model.litertlm") -> Path:
    import litert_lm_builder as lm

    tok = folder / "tokenizer.model"
    tok.write_bytes(b"\x0a\x05hello" * 50)
    b = lm.LitertLmFileBuilder()
    b.add_system_metadata(lm.Metadata(key="author", value="tests", dtype=lm.DType.STRING))
    b.add_sentencepiece_tokenizer(str(tok))
    b.add_tflite_model(str(float_model), lm.TfLiteModelType.PREFILL_DECODE)
    b.add_tflite_model(str(quant_model), lm.TfLiteModelType.AUX)
    out = folder / name
    with open(out, "wb") as fh:
        b.build(fh)
    return out
