"""The application state (models, pairing, selection, sample settings, comparisons, versions
of B) and its serialized forms: session files and the crash-recovery autosave.

May import every other part of core except `viewdata`; plain callbacks, never Qt.
"""
