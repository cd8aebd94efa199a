"""The one drag-and-drop handler: local .tflite files (and .litertlm bundles, whose sections the
window lets the user choose) dropped on a widget (the main window, a model pane). A widget
mixes in `TfliteDropTarget` and implements `files_dropped_here(paths)`."""

from __future__ import annotations

MODEL_SUFFIXES = (".tflite", ".litertlm", ".keras", ".h5", ".hdf5")  # Keras models open through keras_features


def tflite_paths(mime) -> list[str]:
    """Local .tflite / .litertlm files in a drag-and-drop payload."""
    if not mime.hasUrls():
        return []
    from inspector.core.keras.detect import keras_format

    return [u.toLocalFile().rstrip("/") for u in mime.urls() if u.isLocalFile() and
            (u.toLocalFile().lower().endswith(MODEL_SUFFIXES) or keras_format(u.toLocalFile()) == "saved_model")]


class TfliteDropTarget:
    """Mixin for a QWidget: accepts drags that carry .tflite files and hands the paths on."""

    def accept_tflite_drops(self) -> None:
        self.setAcceptDrops(True)  # type: ignore[attr-defined]  # a mixin: the QWidget it is mixed into has it

    def files_dropped_here(self, paths: list[str]) -> None:
        raise NotImplementedError

    def dragEnterEvent(self, e) -> None:  # noqa: N802 - Qt API
        if tflite_paths(e.mimeData()):
            e.acceptProposedAction()

    def dropEvent(self, e) -> None:  # noqa: N802 - Qt API
        paths = tflite_paths(e.mimeData())
        if paths:
            e.acceptProposedAction()
            self.files_dropped_here(paths)
