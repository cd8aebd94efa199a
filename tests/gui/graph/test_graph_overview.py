"""The graph of a 1,500-op model can be read whole (issue 35, item 3): "Fit" drew a blank canvas
(every box under a pixel) and the canvas was ~220 px tall at 1280x800. Now Fit draws every op as a
mark of at least MIN_NODE_PX in its colour (level of detail), an overview strip beside the canvas
shows the whole model in its colours (the clipping block at op 901 in red among blue) and moves
the canvas where it is clicked, and Maximize gives the graph the window's height."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QColor

from inspector.core.compare.comparison import CompareOptions
from inspector.core.samples.settings import SampleSettings
from inspector.gui.graph.canvas import READABLE_SCALE
from inspector.gui.graph.items import MIN_NODE_PX
from tests.helpers.gui_helpers import open_wait
from tests.helpers.many_op_fixtures import residual_pair
from tests.helpers.paths import REPO

WAIT_MS = 60_000


def _painted(img, fill: str) -> int:
    """Pixels of `img` in colour `fill` (within a few levels: antialiased edges aside)."""
    want = QColor(fill)
    n = 0
    for y in range(0, img.height(), 2):
        for x in range(0, img.width(), 2):
            c = img.pixelColor(x, y)
            n += abs(c.red() - want.red()) + abs(c.green() - want.green()) + abs(c.blue() - want.blue()) < 12
    return n


def test_fit_the_overview_and_maximize_on_a_1500_op_model(qtbot, window):
    fa, fb = residual_pair(REPO / ".fixture-cache")
    window.resize(1280, 800)
    g = window.features.graph
    with qtbot.waitSignal(g.laid_out, timeout=WAIT_MS):
        open_wait(qtbot, window, "A", fa)
        open_wait(qtbot, window, "B", fb)
    window.tabs.setCurrentWidget(g.view)
    opts = CompareOptions(samples=SampleSettings(count=2, seed=1))
    with qtbot.waitSignal(window.features.compare.result_changed, timeout=WAIT_MS):
        window.features.compare.run(opts)
    qtbot.waitUntil(lambda: g.styles["B"] is not None and g.styles["B"].metric is not None, timeout=WAIT_MS)  # styled in a worker
    canvas, style = g.view.canvas["B"], g.styles["B"]
    fills = {n.fill for n in style.nodes}
    assert len(fills) > 2

    # the result arrived while the Graph tab was shown: the layer plot, drawn when shown, has it
    plot = window.features.compare_features.plot
    window.features.compare_features.show_page()
    qtbot.wait(50)
    assert not plot.empty.isVisible() and plot.overview.isVisible()
    assert 0 < len(plot.points["accumulated"].getData()[0]) <= 300  # the detail's range only
    window.tabs.setCurrentWidget(g.view)

    # Maximize: the panes give their height to the graph; the button follows F9 both ways
    h0 = canvas.viewport().height()
    g.view.btn_room.setChecked(True)
    qtbot.waitUntil(lambda: window.main_splitter.sizes()[0] == 0, timeout=5000)
    qtbot.wait(50)
    assert canvas.viewport().height() > h0 + 200, (h0, canvas.viewport().height())
    assert not window.act_panes.isChecked()
    window.act_panes.trigger()
    assert not g.view.btn_room.isChecked()
    g.view.btn_room.setChecked(True)

    # Fit: the model is a tall narrow column; fitted whole its boxes were sub-pixel (a thin
    # unreadable column). Fit fills the width at a readable zoom, on the worst op (nothing selected)
    def shown():
        return canvas.mapToScene(canvas.viewport().rect()).boundingRect()

    def centre(op):
        return canvas.nodes[op].sceneBoundingRect().center()

    scene = canvas.scene().sceneRect()
    assert scene.height() > 20 * scene.width()  # the long chain
    canvas.select(None, centre=False)
    canvas.centerOn(canvas.nodes[0])
    g.view.btn_fit.click()
    qtbot.wait(50)
    assert canvas.zoom_level() >= READABLE_SCALE and not canvas.far_out(), canvas.zoom_level()
    assert shown().width() >= min(scene.width(), canvas.viewport().width() / READABLE_SCALE) * 0.95 or \
        scene.width() * canvas.zoom_level() >= 0.9 * canvas.viewport().width()  # the width filled (or readable first)
    assert shown().contains(centre(style.worst_op)), (shown(), centre(style.worst_op))
    strip = g.view.minimap  # the strip outlines where the view is: around the worst op, not the top
    sx, sy, r = strip._scale()
    assert abs(3 + (shown().center().y() - r.y()) * sy - (3 + (centre(style.worst_op).y() - r.y()) * sy)) < strip.height() / 10
    # with an op selected elsewhere, Fit goes to it
    far = 100 if abs(centre(100).y() - centre(style.worst_op).y()) > 2 * shown().height() else 1400
    canvas.select(far, centre=False)
    g.view.btn_fit.click()
    qtbot.wait(50)
    assert shown().contains(centre(far)) and canvas.zoom_level() >= READABLE_SCALE

    # Fit again there: the whole model drawn, op by op in its colour, not a blank canvas
    g.view.btn_fit.click()
    qtbot.wait(50)
    assert canvas.far_out()
    img = canvas.viewport().grab().toImage()
    worst_fill = style.nodes[g.graphs["B"].node_of_op()[style.worst_op]].fill
    assert _painted(img, worst_fill) > 20  # its colour is on the canvas
    ys = [y for y in range(img.height()) if any(img.pixelColor(x, y) != QColor("white") for x in range(0, img.width(), 2))]
    assert ys and ys[-1] - ys[0] > 0.8 * img.height()  # top to bottom: the whole model
    assert MIN_NODE_PX >= 2

    # the overview strip: the model's colours; a click there moves the canvas there
    canvas.set_zoom(0.5)
    canvas.centerOn(canvas.nodes[0])
    assert _painted(strip.grab().toImage(), worst_fill) > 20
    before = canvas.mapToScene(canvas.viewport().rect()).boundingRect().center().y()
    qtbot.mouseClick(strip, Qt.MouseButton.LeftButton, pos=QPoint(strip.width() // 2, strip.height() - 8))
    after = canvas.mapToScene(canvas.viewport().rect()).boundingRect().center().y()
    assert after > before + 0.8 * canvas.scene().sceneRect().height()  # to the model's end
