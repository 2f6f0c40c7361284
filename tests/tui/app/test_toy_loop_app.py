"""The toy loop of tests/core/loops/test_toy_loop.py in the app: registered for the test only, its
state is a row of the Loops inbox, Enter opens its gate screen from the same Evidence as
`scars gate`, and the answer is recorded through the one record path and clears the row."""

from __future__ import annotations

from scars.core.loops import discover_loops
from scars.tui.app.app import ScarsApp
from tests.core.loops.test_toy_loop import _state, toy  # noqa: F401 - the fixture
from tests.factories import clean_env, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, screen_text
from tests.tui.app.test_loops_console import _answer, _open


@aio
async def test_the_toy_loop_is_a_row_of_the_inbox_and_its_gate_is_answered_in_the_app(toy, monkeypatch):  # noqa: F811
    clean_env(monkeypatch)
    app = ScarsApp(None, inbox=(discover_loops(toy), toy), user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await _open(app, pilot, "toy")
        text = screen_text(app)
        assert "Toy widget: go on or halt?" in text and "budget: 2/3 rounds, 1 left" in text
        await _answer(app, pilot, "go", "the toy's next round is cheap")
        await wait_until(
            pilot,
            lambda: not any(s.kind == "toy" and s.waiting_for_human for s in app.screen.states),
            "the inbox read again",
        )
    assert _state(toy)["answers"] == [{"answer": "go", "by": "alice"}]
