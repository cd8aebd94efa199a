"""Table cells answered in one call per cell instead of one per role.

A Qt view paints a cell by asking its model for about ten roles (text, font, colours,
alignment, check state, ...). With a model written in Python each question is a call from C++
into Python, and each such call takes the interpreter lock anew. While a thread of the GUI
process runs Python (a model being read, a pair check, a graph being styled), every one of
those takes waits for that thread to let go: painting 25 rows × 9 columns of a Python model
took 10 ms alone and 170-250 ms beside one busy thread (7,245 lock takes), against 28 ms when
the model answers `multiData` (1,035 takes, one per cell).

`multiData` is Qt 6's one call for all the roles of a cell (the styled item delegate uses it);
`MultiRoleTableModel` answers it from the model's own `data()`, so `data()` stays the one place
a cell's content is decided. `ForwardingFilterProxy` lets a sort/filter proxy pass the one call on to
its source (Qt's proxies otherwise ask the source role by role)."""

from __future__ import annotations

from PySide6.QtCore import (
    QAbstractTableModel,
    QModelIndex,
    QModelRoleData,
    QModelRoleDataSpan,
    QPersistentModelIndex,
    QSortFilterProxyModel,
)


class MultiRoleTableModel(QAbstractTableModel):
    """A table model that answers every role of a cell in one call, from its `data(index, role)`."""

    def multiData(self, index: QModelIndex | QPersistentModelIndex, roleDataSpan: QModelRoleDataSpan | QModelRoleData, /) -> None:  # noqa: N802, N803 - Qt's names
        slots = (roleDataSpan,) if isinstance(roleDataSpan, QModelRoleData) else (
            roleDataSpan[k] for k in range(roleDataSpan.size())  # type: ignore[index]  # PySide's stubs omit the span's __getitem__, which it has
        )
        data = self.data
        for slot in slots:
            value = data(index, slot.role())
            if value is None:
                slot.clearData()  # the delegate reuses its span from cell to cell: no role may keep the last cell's value
            else:
                slot.setData(value)


class ForwardingFilterProxy(QSortFilterProxyModel):
    """A sort/filter proxy that asks its source for a cell's roles in one call (which a
    `MultiRoleTableModel` answers in one call into Python)."""

    def multiData(self, index: QModelIndex | QPersistentModelIndex, roleDataSpan: QModelRoleDataSpan | QModelRoleData, /) -> None:  # noqa: N802, N803 - Qt's names
        self.sourceModel().multiData(self.mapToSource(index), roleDataSpan)
