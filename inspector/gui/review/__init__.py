"""The Audit tab and File > Export report (the GUI side of `core.review`)."""
