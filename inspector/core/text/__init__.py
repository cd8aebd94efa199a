"""How values are written as text, one way everywhere: numbers, decibels, percentages
(`numbers`). Sits at the bottom of core with errors, events, progress and writing: imports
nothing else of inspector."""
