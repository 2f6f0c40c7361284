"""Looking records nothing (issue 27 §3): opening the round gate, a form or a screen and leaving
it writes no byte; one decision and its undo leave no round open; starting a round after a stop
(or to answer the gate with none open) is asked, and only a yes records it."""

from __future__ import annotations

from pathlib import Path

import pytest

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from tests.factories import wait_settled, wait_until
from tests.tui.app.test_app_pilot import (
    SIZE,
    aio,
    confirm_round_start,
    current_item,
    detail_text,
    on_screen,
    screen_text,
    start,
)
from tests.tui.app.test_gate_letters import recorded


def stop_round_1(feature_dir: Path) -> None:
    """The fixture's round 1 recorded as the iteration's stop: the loop went on to Validation."""
    log = feature_dir / "iteration-log.yaml"
    log.write_text(log.read_text().replace("decision: continue", "decision: stop"))


def header(app: ScarsApp) -> str:
    return " ".join(screen_text(app).split()[:12])


@pytest.mark.parametrize("leave", ["escape", "n"])
@aio
async def test_g_on_a_stopped_iteration_and_leaving_records_nothing(feature_dir, leave):
    stop_round_1(feature_dir)
    before = recorded(feature_dir)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert "stopped after round 1 of 3" in screen_text(app)
        assert "the iteration stopped after round 1 (stop): a decision first asks to start round 2" in detail_text(app)
        await pilot.press("g")
        await on_screen(app, pilot, "ConfirmRoundStart")
        await wait_settled(pilot, "the ConfirmRoundStart drawn")
        assert "The iteration stopped after round 1 (stop); start round 2?" in screen_text(app)
        await pilot.press(leave, *(["enter"] if leave == "n" else []))
        await on_screen(app, pilot, "MainScreen")
        await wait_settled(pilot)
        assert "stopped after round 1 of 3" in screen_text(app) and "round 2 of 3" not in screen_text(app)
    assert recorded(feature_dir) == before


@aio
async def test_g_with_no_round_open_asks_and_yes_starts_the_round_explicitly(feature_dir):
    """Not stopped (round 1 continued): `g` still records nothing by itself; yes starts round 2 as
    `scars round start` does (explicitly: undoing a decision later leaves it open), Esc at the gate
    records nothing more."""
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        before = recorded(feature_dir)
        await pilot.press("g")
        await on_screen(app, pilot, "ConfirmRoundStart")
        await wait_settled(pilot, "the ConfirmRoundStart drawn")
        assert "No round is open; start round 2?" in screen_text(app)
        assert recorded(feature_dir) == before
        await pilot.press("enter")  # "no" is marked when it opens: Enter alone starts nothing
        await on_screen(app, pilot, "MainScreen")
        assert recorded(feature_dir) == before
        await pilot.press("g")
        await confirm_round_start(app, pilot)
        await on_screen(app, pilot, "RoundGate")
        await wait_settled(pilot, "the RoundGate drawn")
        started = recorded(feature_dir)
        assert started != before
        await pilot.press("escape")
        await on_screen(app, pilot, "MainScreen")
        await wait_settled(pilot)
        assert recorded(feature_dir) == started
        assert "round 2 of 3" in screen_text(app)
    with FeatureSession.open(feature_dir, read_only=True) as s:
        assert s.current_round() == 2 and "opened_by" not in s.open_round()


@aio
async def test_one_decision_and_its_undo_leave_no_round_open(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        shown = header(app)
        item = current_item(app)
        await pilot.press("f")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
        assert app.backend.round_open()
        await pilot.press("u")
        await wait_until(pilot, lambda: item not in app.decisions, "the fix undone")
        await wait_settled(pilot)
        assert not app.backend.round_open()
        assert header(app) == shown
    with FeatureSession.open(feature_dir, read_only=True) as s:
        assert s.current_round() is None and s.stopped() is None
        undo = s.records[-1]
        assert undo["type"] == "undo" and undo["withdraws_round"] == s.records[0]["seq"]


@pytest.mark.parametrize("key", ["a", "d", "t", "question_mark", "L"])
@aio
async def test_opening_a_form_or_a_screen_and_leaving_records_nothing(feature_dir, key):
    stop_round_1(feature_dir)  # a form must not start a round either
    before = recorded(feature_dir)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press(key)
        await wait_until(pilot, lambda: type(app.screen).__name__ != "MainScreen", "a screen on top")
        await wait_settled(pilot)
        await pilot.press("q" if key == "L" else "escape")
        await on_screen(app, pilot, "MainScreen")
        await wait_settled(pilot)
        assert "stopped after round 1 of 3" in screen_text(app)
    assert recorded(feature_dir) == before
