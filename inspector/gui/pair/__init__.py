"""The pair check (swapped, not twins), the random-inputs notice and the samples remembered per pair."""
