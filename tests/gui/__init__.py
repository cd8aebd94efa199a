"""Tests of inspector.gui: one folder per feature folder of inspector/gui (compare/, requantize/, ...),
views/ for the shared views, app/ for the window, the app and the modules at the top of inspector/gui,
contracts/ for the checks across the GUI (feature isolation, one event path, no stalls)."""
