"""Keras / SavedModel / QAT models as A: their TFLite twins and the Keras / QAT tab."""
