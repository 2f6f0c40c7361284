"""The round gate shows what decides first (issue 32): the warnings and the advice above the
figures, in view at 80x24; PgDn / PgUp scroll its body whatever has the focus."""

from __future__ import annotations

import pytest

from scars.core import gates
from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from tests.factories import samsara_feature, wait_until
from tests.tui.app.test_app_pilot import aio, on_screen, start


def _stagnating(root):
    """A feature whose round 2 is open after a flat round 1: valves near, advice given."""
    f = samsara_feature(root)
    with FeatureSession.open(f, user="alice") as s:
        s.start_round()
    gates.record(gates.gather("round-continue", f), "continue", "still looking for the root cause", user="alice")
    with FeatureSession.open(f, user="alice") as s:
        s.start_round()
    return f


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@aio
async def test_warnings_and_advice_come_first_and_pgdn_scrolls(tmp_path, size):
    f = _stagnating(tmp_path)
    app = ScarsApp(f, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        await pilot.press("g")
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        body = gate.query_one("#gate-body")
        warnings, advice, figures = (gate.query_one(s) for s in ("#gate-warnings", "#gate-advice", "#gate-figures"))
        await wait_until(pilot, lambda: body.region.height > 0 and advice.region.height > 0, "the gate laid out")
        assert warnings.region.y < advice.region.y < figures.region.y
        assert advice.region.bottom <= body.region.bottom  # in view without scrolling
        assert gate.query_one("#gate-choices").has_focus
        if body.max_scroll_y > 0:
            await pilot.press("pagedown")
            await wait_until(pilot, lambda: body.scroll_y > 0, "PgDn scrolled the body")
            await pilot.press("pageup")
            await wait_until(pilot, lambda: body.scroll_y == 0, "PgUp scrolled it back")
