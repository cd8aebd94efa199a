"""The comparison: Run, the layer error plot, activations, worst samples, the inputs to compare on."""
