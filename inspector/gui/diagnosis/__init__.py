"""The diagnosis' actions on a layer: Apply fix (through the requantize feature) and Extract as repro."""
