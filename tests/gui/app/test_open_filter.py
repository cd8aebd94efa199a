"""File › Open's default filter shows every kind of model the app opens: a Keras `.h5` or
`.keras` file was hidden until the user changed the filter (issue 27 §12)."""

from __future__ import annotations

import fnmatch

from inspector.gui.main_window import FILE_FILTER


def test_the_default_filter_shows_every_model_kind():
    first = FILE_FILTER.split(";;")[0]
    patterns = first[first.index("(") + 1 : first.index(")")].split()
    for name in ("m.tflite", "b.litertlm", "qat.h5", "m.keras", "m.hdf5"):
        assert any(fnmatch.fnmatch(name, p) for p in patterns), name
