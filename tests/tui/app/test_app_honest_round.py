"""An honest round in the app (issue 14 point 5), as the CLI and answers files have it
(tests/core/gates/test_honest_round.py): the round gate says how many items are undecided, a
pending second-person accept blocks the close, Rule 3 is asked and written (or said not given),
a fired valve makes the modal the safety valve's gate (continue there is the override, recorded),
and a round past max_rounds asks for the override's reason."""

from __future__ import annotations

import pytest
import yaml

from scars.core import gates
from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from tests.factories import wait_settled, wait_until
from tests.tui.app.test_app_pilot import (
    SIZE,
    aio,
    confirm_round_start,
    current_item,
    fill,
    on_disk,
    on_screen,
    record_notes,
    screen_text,
    start,
)


def _rounds(feature_dir):
    return yaml.safe_load((feature_dir / "iteration-log.yaml").read_text(encoding="utf-8"))["rounds"]


def _written(feature_dir, n: int):
    return lambda: len(_rounds(feature_dir)) >= n


@aio
async def test_the_gate_says_undecided_and_asks_rule_3(feature_dir):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        counted = sum(1 for it in app.feature.items if it.counted)
        await pilot.press("f")
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the fix recorded")
        await pilot.press("g")
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        assert dict(gate.evidence.figures)["undecided"] == f"{counted - 1} of {counted}"
        assert f"{counted - 1} of {counted} items undecided: continue carries them to round 3" in " ".join(
            screen_text(app).split()
        )
        gate.query_one("#gate-evidence").value = "a red test; then green"
        gate.query_one("#gate-budget").value = "none"
        gate.query_one("#gate-reason").value = "the remaining items wait for the v2 exporter"
        notes = record_notes(app)
        await pilot.click("#gate-stop")
        await wait_until(pilot, _written(feature_dir, 2), "round 2 written")
        # The iteration ended: the app says seed 002's final transition line.
        await wait_until(pilot, lambda: any(t == "Iteration done" for t, _ in notes), "the transition said")
        [said] = [m for t, m in notes if t == "Iteration done"]
        assert said.startswith("Iteration 完成。2 輪執行，signal_lost: ")
    r2 = _rounds(feature_dir)[1]
    assert (r2["evidence_gained"], r2["budget_spent"], r2["residual_risk"]) == (["a red test", "then green"], {}, [])
    assert r2["rule3_not_given"] == ["residual_risk"]  # left empty: recorded as none, and said
    assert r2["items_undecided"] == counted - 1 and r2["undecided_outcome"].startswith("left undecided")


@aio
async def test_a_pending_second_person_accept_blocks_the_round_gate(feature_dir):
    app = ScarsApp(feature_dir, pair=["alice", "bob"], require_second=["accept"])
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        item = current_item(app)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        fill(app, re_review_signal="second writer appears", owner="carol", rationale="single process")
        await pilot.click("#form-save")
        await wait_until(pilot, lambda: item in app.decisions, "the accept recorded")
        await pilot.press("g")
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        assert gate.evidence.facts["pending_review"] == [item]
        gate.query_one("#gate-reason").value = "the remaining items wait for the v2 exporter"
        await pilot.click("#gate-stop")
        await wait_until(pilot, lambda: gate.query_one("#gate-error").has_class("shown"), "the refusal shown")
        assert "second person's sign-off" in str(gate.query_one("#gate-error").render())
    assert len(_rounds(feature_dir)) == 1  # never written as a plain accept
    assert on_disk(feature_dir)[item].pending_review


@aio
async def test_a_fired_valve_makes_the_gate_the_safety_valve_and_continue_its_override(feature_dir):
    # Round 2 changed nothing and continued; round 3 changes nothing either: stagnation fires
    # (and round 3 is the last of 3).
    with FeatureSession.open(feature_dir, user="alice") as s:
        s.start_round()
    gates.record(gates.gather("round-continue", feature_dir), "continue", "one more look at the cache", user="alice")
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await pilot.press("g")
        await confirm_round_start(app, pilot)  # no round is open: round 3 is started when asked
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        assert gate.evidence.gate.id == "safety-valve" and "stagnation" in gate.evidence.facts["valves"]
        gate.query_one("#gate-reason").value = "the root cause was found; its fix lands next round"
        await pilot.click("#gate-continue")
        await wait_until(pilot, _written(feature_dir, 3), "round 3 written")
    r3 = _rounds(feature_dir)[2]
    assert r3["decision"] == "continue"
    # Round 3 of 3: continuing goes past max_rounds too; both valves are overridden, by name.
    assert [(o["valve"], o["by"]) for o in r3["valve_overrides"]] == [("max_rounds", "alice"), ("stagnation", "alice")]


@aio
async def test_a_round_past_max_rounds_asks_for_the_override(feature_dir):
    # Rounds 2 and 3 closed (the fixture's log holds round 1 of max_rounds 3).
    for _ in range(2):
        with FeatureSession.open(feature_dir, user="alice") as s:
            s.start_round()
            gates.close_round(s, "continue", "the next item is actionable", override=["stagnation", "max_rounds"])
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        items = app.screen.items
        rows, item, cursor = items.rows, current_item(app), items.cursor
        rebuilt: list = []
        set_rows = items.set_rows
        items.set_rows = lambda *a, **k: rebuilt.append(a) or set_rows(*a, **k)
        await pilot.press("f")  # the first decision opens round 4: the max-rounds valve asks why
        await on_screen(app, pilot, "OverrideReason")
        assert "round 4 would pass max_rounds 3" in " ".join(screen_text(app).split())
        app.screen.query_one("#override-reason").value = "the owner asked for one last one-line fix"
        await pilot.click("#override-ok")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded in round 4")
        await wait_settled(pilot, "what the recorded fix set off done (a rebuild, a reload)")
        # Drawn as the same `f` recorded at once: the rows it changed (the retry built every row
        # again and drew the whole list) and the cursor on the next item (it stayed).
        assert rebuilt == [] and items.rows is rows
        assert items.cursor == next(i for i in range(cursor + 1, len(rows)) if rows[i].selectable)
    with FeatureSession.open(feature_dir, read_only=True) as s:
        assert s.current_round() == 4
        assert s.open_round()["valve_override"]["reason"] == "the owner asked for one last one-line fix"


@pytest.mark.parametrize(
    ("round_no", "round_open", "shown"),
    [
        (3, False, "round 3 of 3"),  # the last round within max_rounds: nothing to override
        (3, True, "round 3 of 3"),
        (4, False, "3 of 3 rounds done · round 4 needs the max-rounds override"),
        (4, True, "round 4 of 3 (max-rounds override)"),  # opened with the override
    ],
)
def test_the_header_never_shows_a_round_past_max_rounds_as_running(feature_dir, round_no, round_open, shown):
    from scars.core.samsara.feature import read_feature
    from scars.tui.app.widgets.header import header_text

    text = header_text(
        read_feature(feature_dir),
        round_no=round_no,
        progress=(0, 5),
        driver=None,
        read_only=None,
        round_open=round_open,
    ).plain
    assert text.endswith("  " + shown)


@aio
async def test_the_app_header_before_and_after_the_max_rounds_override(feature_dir):
    for _ in range(2):  # rounds 2 and 3 closed: round 4 would pass max_rounds 3
        with FeatureSession.open(feature_dir, user="alice") as s:
            s.start_round()
            gates.close_round(s, "continue", "the next item is actionable", override=["stagnation", "max_rounds"])
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=(180, 40)) as pilot:
        await start(app, pilot)
        assert "3 of 3 rounds done · round 4 needs the max-rounds override" in screen_text(app)
        assert "round 4 of 3" not in screen_text(app)
        item = current_item(app)
        await pilot.press("f")
        await on_screen(app, pilot, "OverrideReason")
        app.screen.query_one("#override-reason").value = "the owner asked for one last one-line fix"
        await pilot.click("#override-ok")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded in round 4")
        await wait_until(pilot, lambda: "round 4 of 3 (max-rounds override)" in screen_text(app), "the header")
