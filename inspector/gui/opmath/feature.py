"""The op math feature: the Op math tab (`OpMathFeature(controller, ui, source)`, composed by the
main window), the integer arithmetic of the selected op of B (of A when no B is open), with the
comparison's figures when there is one (`source`, from the comparison feature). The numbers come
from core (`quantmath.opmath`); collaborators add a section (`set_section`, the Keras feature's
QAT ranges) after `op_math_updated`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.core.quantmath.opmath import op_math
from inspector.core.quantmath.opmath_types import OpMath
from inspector.gui.opmath.op_math_panel import OpMathPanel
from inspector.gui.protocols import ModelsController, ResultSource, Section
from inspector.gui.ui_services import UiServices


class OpMathFeature(QObject):
    op_math_updated = Signal(object)  # OpMath | None

    def __init__(self, controller: ModelsController, ui: UiServices, source: ResultSource) -> None:
        super().__init__(ui.parent)
        self.controller = c = controller
        self.source = source
        self.op_math_panel = OpMathPanel()
        ui.add_tab("Op math", self.op_math_panel)
        c.selection_changed.connect(lambda _s: self.update_op_math())
        source.changed.connect(self.update_op_math)

    def current_math(self) -> OpMath | None:
        """The OpMath shown, or None."""
        return self.op_math_panel.math

    def set_section(self, section: Section | None) -> None:
        """An extra section under the math (None: none)."""
        self.op_math_panel.set_section(section)

    # ------------------------------------------------------------------ op math
    def update_op_math(self) -> None:
        c = self.controller
        slot = "B" if c.models["B"] is not None else "A"
        model, op = c.models[slot], c.selection.op(slot)
        if model is None or op is None:
            self.op_math_panel.set_math(None)
            self.op_math_updated.emit(None)
            return
        try:
            om = op_math(model, op, comparison=self.source.result() if slot == "B" else None)
        except Exception as e:  # noqa: BLE001 - a model the math does not cover: say so, stay up
            self.op_math_panel.set_math(None, message=f"Cannot explain op {op} of {Path(model.path).name}: {type(e).__name__}: {e}")
            self.op_math_updated.emit(None)
            return
        label = "B · quantized" if slot == "B" else "A · float (no quantized model open)"
        where = f" · signature '{model.signature_key}' (subgraph {om.subgraph})" if model.signature_key else ""
        self.op_math_panel.set_math(om, context=f"{label} · {Path(model.path).name}{where}")
        self.op_math_updated.emit(om)
