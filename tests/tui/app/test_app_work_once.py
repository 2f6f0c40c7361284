"""The app does each piece of work once (issue 17's leftovers): the safety valves once per load,
the round gate's evidence once per `g`, and the detail pane's layout check once per repaint (a
decision recorded after the max-rounds override is drawn as any decision is:
tests/tui/app/test_app_honest_round.py)."""

from __future__ import annotations

import gc

from textual.message import Message

from scars.core import gates
from scars.core.samsara.session import FeatureSession
from scars.tui.app import app as app_module
from scars.tui.app.app import ScarsApp
from scars.tui.app.widgets.detail import DetailPane
from tests.factories import long_repo, wait_settled, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, confirm_round_start, current_item, on_screen, record_notes, start


def _counting(monkeypatch, module, name: str) -> list:
    """Every call of ``module.name`` from now on, by its arguments (it still does its work);
    without ``monkeypatch``, ``module`` is an object whose method is counted for its life."""
    calls: list = []
    real = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    if monkeypatch is None:
        setattr(module, name, counted)
    else:
        monkeypatch.setattr(module, name, counted)
    return calls


@aio
async def test_a_load_evaluates_the_safety_valves_once(feature_dir, monkeypatch):
    """The loader evaluated the valves and the screen's first redraw evaluated them again."""
    calls = _counting(monkeypatch, app_module, "evaluate_valves")
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert len(calls) == 1
        notes = record_notes(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(t == "Reload" for t, _ in notes), "the reload said")
        assert len(calls) == 2
        await pilot.press("f")  # a decision changes what the valves see: evaluated again
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the fix recorded")
        assert len(calls) == 3


@aio
async def test_the_round_gate_is_gathered_once_when_a_valve_fired(feature_dir, monkeypatch):
    """`g` gathered the round gate, and gathered it again as the safety valve's when a valve had
    fired (the first evidence already was the safety valve's)."""
    with FeatureSession.open(feature_dir, user="alice") as s:
        s.start_round()
    gates.record(gates.gather("round-continue", feature_dir), "continue", "one more look at the cache", user="alice")
    calls = _counting(monkeypatch, gates, "gather")
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("g")
        await confirm_round_start(app, pilot)  # no round is open: round 3 is started when asked
        await on_screen(app, pilot, "RoundGate")
        assert app.screen.evidence.gate.id == "safety-valve" and "stagnation" in app.screen.evidence.facts["valves"]
    assert [c[0] for c in calls if c[0] != "blocked-fix"] == ["round-continue"]


@aio
async def test_the_detail_pane_checks_its_width_and_style_once_per_repaint(tmp_path):
    """The pane compared its width (the content region, computed from its size, padding and
    scrollbar) and style with those of its lines for every line it drew; once per repaint is
    enough, and a change of its style still renders them again.

    A repaint is one pass of the compositor over the pane that draws its lines (``render_lines``
    calling ``render_line``; a pass the styles cache answers draws none). How many passes a step
    takes is the frame timer's business (one on an idle machine, more when a late style update
    misses the frame on a loaded one): each pass that draws checks once, whatever their number."""
    root = tmp_path / "repo"
    root.mkdir()
    app = ScarsApp(long_repo(root), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        pane = app.screen.query_one(DetailPane)
        checks, drawn = _counting(None, pane, "_render_content"), _counting(None, pane, "render_line")
        passes: list[tuple[int, int]] = []  # (lines drawn, checks made) in each pass that drew
        render_lines = pane.render_lines

        def one_pass(crop):
            lines, made = len(drawn), len(checks)
            strips = render_lines(crop)
            if len(drawn) > lines:
                passes.append((len(drawn) - lines, len(checks) - made))
            return strips

        pane.render_lines = one_pass  # type: ignore[method-assign]
        item = current_item(app)
        await pilot.press("down")
        await wait_until(pilot, lambda: current_item(app) != item and len(drawn) >= pane.size.height, "drawn")
        await wait_settled(pilot, "every repaint the step set off done")
        assert passes and all(made <= 1 for _, made in passes), passes  # once per repaint
        assert passes[0][0] == pane.size.height > 2  # a repaint draws every line of the pane
        assert len(checks) - sum(made for _, made in passes) <= 1  # and once in show_item
        repaints = len(passes)
        pane.refresh()  # one more repaint, as a style update that missed the step's frame makes
        await wait_until(pilot, lambda: len(passes) > repaints, "the pane drawn again")
        await wait_settled(pilot, "the repaint done")
        assert all(made <= 1 for _, made in passes) and passes[-1][0] == pane.size.height, passes
        before = pane.render_line(0)
        pane.styles.background = "darkred"
        await wait_until(pilot, lambda: pane.render_line(0) != before, "the detail in its new colours")
        assert pane.render_line(0).text == before.text


@aio
async def test_what_a_load_built_is_out_of_the_collectors_sight_when_it_is_shown(feature_dir):
    """A load freezes what it built (the feature, its items, rows and state: `gc.freeze()` in
    `_load`) before it is shown, so no collection from then on traverses it again (a full one
    took ~140 ms at 40,000 items, a stalled key: issue 17): when the app takes the message that
    shows a load, none of those objects is in a generation the collector looks at."""
    looked: list[tuple[str, int, int]] = []

    def hook(message: Message) -> None:
        if isinstance(message, ScarsApp.PatternsReady) or (
            isinstance(message, ScarsApp.Loaded) and not message.pending
        ):
            # (an early Loaded is shown before its patterns, frozen with them: PatternsReady)
            feature = message.backend.feature  # (its views are built on first use: not asked here)
            built = [message.state, feature, *feature.items]
            built += message.rows if isinstance(message, ScarsApp.Loaded) else []
            tracked = {id(o) for o in gc.get_objects()}  # every generation but the permanent one
            looked.append((type(message).__name__, len(built), sum(id(o) in tracked for o in built)))

    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE, message_hook=hook) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: any(t == "Reload" for t, _ in notes), "the reload said")
    assert len(looked) == 2 and looked[1][0] == "Loaded"  # the first load's, the reload's
    assert all(n > 10 and in_sight == 0 for _, n, in_sight in looked), looked
