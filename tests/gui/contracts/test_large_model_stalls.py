"""The window stays responsive on a model of real size (issue 35, item 1): on a generated
1,500-op residual pair (`tests/helpers/many_op_fixtures.py`, no TensorFlow, built in well under
a second) nothing blocks the GUI event loop for more than 100 ms while the user opens the pair,
the comparison result arrives, clicks an op while Layer error is shown, switches to Layer error,
clicks in the graph and then shows Layer error, resizes the window, applies a fix.

Measured with a 10 ms timer on the GUI thread (`EventLoopWatchdog`): the bound (`bound_ms`,
100 ms on the issue's machine class, scaled to a slower machine) applies to the GUI thread's own
CPU time in its busiest gap between two ticks (work that held the event loop in one go); the
wall-clock gap is printed beside it and guarded at a second (on a shared machine with a load of 9 on
2 cores, the scheduler alone made 400 ms wall-clock gaps).

Before this issue's changes, on this pair (wall-clock, three tries each): opening 1,290-2,308 ms,
the result arriving 1,327-4,901 ms, a click with Layer error shown 330-408 ms, switching to Layer
error 886-1,526 ms, graph click then Layer error 381-795 ms, a resize 551-919 ms, Apply fix
8,935 ms (11 s of it naming the layers of the plan row, O(ops²)). After: every action under
100 ms of GUI-thread CPU (typically 30-80) but Apply fix at 158-228 ms (its bound was relaxed to
250), 133-321 ms once each try made a real new version (a retry used to find nothing to change
and measured 15 ms of nothing); then 86-96 ms: the new model paired with A and its layers named
in the thread that reads it, the layer lists' columns and the exact-SQNR line made in the
comparison's worker, one version delta per result shown once, the layer plot drawn on a 1 ms
timer after the click and the result instead of within them: 80-130 ms.

Wall-clock gaps where Worker threads of the GUI process run Python beside the GUI thread (the
models being read, the pair check, the audit, the graph, a result's figures): the GUI thread
takes the interpreter lock anew for each call from Qt into Python and waited for those threads
each time. Measured at the start of the next round (quiet machine, best of three): opening the
pair 460-622 ms, the result arriving 147-246 ms, Apply fix 487-616 ms. Then tables answer a
cell in one call (`gui/views/item_roles.py`: painting 1,500 rows beside a busy thread 173 ->
12 ms), the tensor filter no longer calls Python per row when no filter is on, the process
switches threads every 0.2 ms and the app freezes its start-up objects out of the cyclic
collector (`gui/interpreter.py`: a full collection 90 -> 16-21 ms), op math reads the figures of
the selected op's tensors only, the pair check stopped copying a 3,000-entry map 8,000 times, and
the versions' delta table and the random-inputs notice are drawn once per result: opening the
pair 86-267 ms, the result arriving 84-145 ms, Apply fix 166-287 ms (the other actions 20-80 ms,
as their CPU time); Apply fix's GUI-thread CPU 97-157 ms. Then the layer lists' SQNR colours
made for the rows drawn (6,000 per result were made up front), the root-cause strip as tall with
its button as without (a result arriving moved the window's layout twice), A's unmatched graph
nodes marked once per pair, the trade-off plot redrawn only for new points, the layer plot's
series and the versions' delta rows each in a turn of the event loop of their own
(`gui/turns.py`; two 1 ms timers fired back to back in one pass), the process switching
threads every 0.05 ms: GUI-thread CPU in the busiest gap, best of
the tries, over three runs: opening the pair 50-70 ms, the result arriving 67-79, Apply fix
63-97 (60-148 per try), the other actions 25-53; wall-clock opening the pair 125-173 ms, the
result arriving 120-161, Apply fix 109-165, the others 35-59. Those runs also held cyclic
collections off while a Worker's result was handed over, since reverted (a collection in a pool
thread then destroyed a garbage widget and deadlocked with the GUI thread); without it, two
runs: Apply fix 95-120 ms, the others 25-74 ms; wall-clock Apply fix 184-209 ms. Then cyclic
collections run on a GUI-thread timer only (`gui/interpreter.py`: none within a handler or a
Worker, none of a widget off the GUI thread), finished Workers let go of their arguments and
results (a handler naming its worker is a cycle through Qt: 55,000 objects kept per Apply fix),
a version's delta is made and drawn a turn after its result, each result's layer series and
"∞" line are made in the worker, the run row's progress bar no longer repaints the window
synchronously when a run ends (`set_bar_value`: 37-41 ms), a model's tensor columns are sized
on 48 rows (120: 15 ms) and the equalize check reads one tensor's consumers without copying the
map: GUI-thread CPU, best try, five runs: Apply fix 60-83 ms, the result arriving 45-85, opening
the pair 42-59, the others 26-61; wall-clock Apply fix 108-157 ms, opening the pair 100-200, the
result arriving 91-147: there the GUI thread shared the interpreter lock in turns with Worker
threads running Python (reading a 1,500-op model, the audit, the graph, the pair check). Then
core's long loops give way while the GUI thread handles events (`core.progress.give_way`, the window's
gate in `gui/interpreter.py`): three runs, quiet machine, wall-clock opening the pair 49-67 ms,
the result arriving 64-87, Apply fix 67-81, the others 41-78; GUI-thread CPU Apply fix 58-73,
the others 31-77.

A shared 2-core machine delays a timer now and then for reasons of its own, and work on its
other core (the comparison's worker) slows the GUI thread's own CPU time as well (`machine_scale`
measured 1.0-1.7 within one run of this test): an action over the bound is measured again (up to
four times) and the try nearest to its bound counts, so a freeze that is real (every try) fails
and a hiccup does not. `TQI_PROFILE_GUI=1` prints a cProfile of the GUI thread's busiest gap
(its CPU time) for each action."""

from __future__ import annotations

import contextlib
import gc
import os

from PySide6.QtCore import Qt

from inspector.core.compare.comparison import CompareOptions
from inspector.core.compare.diagnosis_types import Fix
from inspector.core.requantize.diagnosis_fix import fix_plan
from inspector.core.samples.settings import SampleSettings
from tests.helpers.event_loop_watchdog import EventLoopWatchdog, bound_ms
from tests.helpers.gui_helpers import open_wait
from tests.helpers.many_op_fixtures import residual_pair
from tests.helpers.paths import REPO

# Every action under the one bound (`bound_ms`: 100 ms of GUI-thread CPU in the busiest gap on the
# machine class the issue measured on, scaled to a slower machine by `machine_scale`, measured
# before each try); Apply fix too since this round (97-157 ms at its start, 58-73 now). The
# wall-clock gap (what the user sees, and what the issue measured) is under 100 ms too on a quiet
# machine since Worker threads give way to the window (`core.progress.give_way`: 41-87 ms, three runs);
# it is held to 1.5x the bound, the room a loaded 2-core CI machine takes (its scheduler delays a
# timer now and then whatever the app does).
NOT_YET: dict[str, float] = {}
WALL_FACTOR = 1.5
walls: dict[str, float] = {}  # the wall-clock gaps, reported beside the bound's figure
bounds: dict[str, float] = {}  # each action's bound on this machine (`bound_ms`)
RUN_MS = 120_000
TRIES = 4


@contextlib.contextmanager
def _watch(name: str, gaps: dict[str, float], bound: float):
    profile = bool(os.environ.get("TQI_PROFILE_GUI"))
    with EventLoopWatchdog(profile=profile) as dog:
        yield dog
    if profile:
        print(f"\n=== {name}: {dog.report()}; the busiest gap's work:\n{dog.busiest_profile}")
    if name not in gaps or dog.longest_cpu_ms / bound < gaps[name] / bounds[name]:  # the try nearest to passing
        gaps[name], bounds[name] = dog.longest_cpu_ms, bound
    walls[name] = min(walls.get(name, float("inf")), dog.longest_ms)
    print(f"{name}: {dog.report()}; bound {bound:.0f} ms")


def _settle(qtbot) -> None:
    """Earlier work (queued events, a cyclic-GC pass over earlier tests' windows) is done before
    a watch starts: each action is charged for its own work only."""
    qtbot.wait(150)
    gc.collect()
    qtbot.wait(50)


def _measure(qtbot, name: str, gaps: dict[str, float], action) -> None:
    for _ in range(TRIES):
        _settle(qtbot)
        bound = bound_ms() * NOT_YET.get(name, 1.0)  # this machine's speed, measured while it is quiet
        with _watch(name, gaps, bound):
            action()
        if gaps[name] < bounds[name] and walls[name] < WALL_FACTOR * bounds[name]:
            return


def _click_row(qtbot, pane, op: int) -> None:
    view = pane.op_view
    idx = pane.ops.index(op, 0)
    view.scrollTo(idx)
    qtbot.wait(20)
    rect = view.visualRect(idx)
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.wait(60)  # the repaint the click queued


def test_a_1500_op_pair_never_blocks_the_window(qtbot, app_window):
    fa, fb = residual_pair(REPO / ".fixture-cache")
    gaps: dict[str, float] = {}
    win = app_window
    win.resize(1280, 800)
    graph = win.features.graph

    def open_pair() -> None:
        with qtbot.waitSignal(graph.laid_out, timeout=RUN_MS):
            open_wait(qtbot, win, "A", fa)
            open_wait(qtbot, win, "B", fb)
        qtbot.waitUntil(lambda: win.features.pair.checker.worker is None, timeout=RUN_MS)
        qtbot.wait(100)

    _measure(qtbot, "open the pair", gaps, open_pair)
    assert len(win.controller.models["B"].main.ops) == 1502

    opts = CompareOptions(samples=SampleSettings(count=4, seed=1))
    win.features.compare.set_options(opts)
    win.features.compare_features.show_page()

    def result_arrives() -> None:
        with qtbot.waitSignal(win.features.compare.result_changed, timeout=RUN_MS):
            win.features.compare.run(opts)
        qtbot.waitUntil(lambda: not win.features.compare.running, timeout=RUN_MS)
        qtbot.wait(100)

    _measure(qtbot, "the comparison result arriving", gaps, result_arrives)
    result = win.features.compare.result
    assert result is not None and len(result.layers) == 1500

    pane = win.ui.panes["B"]
    ops = iter([901, 450, 1200, 30, 700, 1400])
    _measure(qtbot, "click an op with Layer error shown", gaps, lambda: _click_row(qtbot, pane, next(ops)))
    assert win.features.compare_features.plot.selected in (901, 450, 1200, 30, 700, 1400)

    def switch_to_layer_error() -> None:
        win.ui.show_tab(win.features.compare_features.activations)
        qtbot.wait(60)
        win.features.compare_features.show_page()
        qtbot.wait(60)

    _measure(qtbot, "switch to Layer error", gaps, switch_to_layer_error)

    def graph_click_then_layer_error() -> None:
        win.ui.show_tab(graph.view)
        qtbot.wait(60)
        canvas = graph.view.canvas["B"]
        canvas.select(1000)
        graph.click("B", 1000)
        qtbot.wait(60)
        win.features.compare_features.show_page()
        qtbot.wait(60)

    _measure(qtbot, "graph click then Layer error", gaps, graph_click_then_layer_error)
    assert win.controller.selection.op("B") == 1000

    sizes = iter([(1400, 900), (1100, 700), (1280, 800), (1200, 760)])

    def resize() -> None:
        win.resize(*next(sizes))
        qtbot.wait(80)

    _measure(qtbot, "resize the window", gaps, resize)

    outcome: list[str] = []
    rq = win.features.requantize
    rq.finished.connect(lambda v: outcome.append(f"finished {v.name}"))
    rq.failed.connect(lambda m: outcome.append(f"failed {m}"))
    rq.unchanged.connect(lambda m: outcome.append(f"unchanged {m}"))

    used: set[int] = set()

    def fix_plan_now():
        """A diagnosed fix when the diagnosis proposes one; else (blame finds this model's error
        spread over hundreds of blocks, no single op carrying 10 % of it, so it proposes none)
        the re-calibration of the worst layer by own error: the same Requantize work Apply fix runs.
        Each try re-calibrates another layer: a retry of the same fix found nothing left to change
        and measured 15 ms of nothing (a new version never arrived)."""
        now = win.features.diagnosis_features.diagnosed()
        fixable = [lay for lay in now.layers if lay.diagnosis is not None and lay.diagnosis.fix is not None
                   and lay.diagnosis.fix.edit == "recalibrate" and lay.op_index not in used]
        if fixable:
            used.add(fixable[0].op_index)
            return fix_plan(fixable[0].diagnosis.fix, signature=now.signature)
        worst = min((x for x in now.layers if x.isolated is not None and x.op_type == "FULLY_CONNECTED"
                     and x.op_index not in used), key=lambda x: x.isolated.sqnr_db)
        used.add(worst.op_index)
        return fix_plan(Fix("recalibrate", (worst.op_index,)), signature=now.signature)

    def apply_fix() -> None:
        outcome.clear()
        assert win.features.requantize_features.apply_plan(fix_plan_now()) is not None
        qtbot.waitUntil(lambda: bool(outcome), timeout=RUN_MS)
        qtbot.waitUntil(lambda: not rq.running, timeout=RUN_MS)
        qtbot.wait(100)
        assert outcome[0].startswith("finished"), outcome  # a new version arrived: the work measured

    _measure(qtbot, "Apply fix", gaps, apply_fix)
    assert win.state.current is not None and win.state.current != 0

    print("bounds on this machine (ms):", {k: round(v) for k, v in bounds.items()})
    over = {k: round(v) for k, v in gaps.items() if v >= bounds[k]}
    print("GUI thread CPU in the busiest gap (ms):", {k: round(v) for k, v in gaps.items()})
    print("wall-clock longest gap (ms):", {k: round(v) for k, v in walls.items()})
    assert not over, f"the event loop was blocked longer than the bound ({bounds}): {over} (all: {gaps})"
    late = {k: round(v) for k, v in walls.items() if v >= WALL_FACTOR * bounds[k]}
    assert not late, f"wall-clock gaps over {WALL_FACTOR}x the bound ({bounds}): {late} (all: {walls})"
