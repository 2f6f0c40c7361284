"""Pilot tests of the app on real-shaped samsara features (issue 14): decisions carried from
earlier rounds, the report's debt_location and the Evaluation Contract in the detail pane."""

from __future__ import annotations

from pathlib import Path

import pytest

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from scars.tui.app.viewmodel import decision_mark
from tests.core.samsara.test_carry_over import real_copy
from tests.factories import wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, current_item, detail_text, filter_by, screen_text, start


@pytest.fixture
def search(tmp_path: Path) -> Path:
    return real_copy(tmp_path, "2026-08-04_search-index")


@aio
async def test_carried_decisions_show_count_and_can_be_redecided(search):
    app = ScarsApp(search, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        text = screen_text(app)
        assert "[12/16]" in text  # the round-1 triage counts: not [0/16]
        assert "A acc r1" in text and "F fix r1" in text and "D def r1" in text
        assert current_item(app) not in app.decisions  # the cursor starts on an item nobody decided
        await filter_by(app, pilot, "crawler follows")
        crawler = current_item(app)
        assert app.decisions[crawler].carried
        detail = detail_text(app)
        assert "Decision: ACCEPT  carried from iteration-log.yaml" in detail
        assert "accepted in round 1 (iteration-log.yaml) — legacy expiry 2026-11-04, no re-review signal" in detail
        assert "matched: similar" in detail and "re-decide it for this round" in detail
        assert "Report's debt_location: indexer/crawler.py — link extraction and decoding" in detail
        assert "Where:" not in detail
        # Re-decided in a new round: a person's decision replaces the carried one. Round 1 stopped
        # the iteration, so the decision asks to start round 2 first (y marks yes, Enter starts it).
        await pilot.press("f")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "ConfirmRoundStart", "asked to start round 2")
        assert "The iteration stopped after round 1 (stop); start round 2?" in screen_text(app)
        await pilot.press("y", "enter")
        await wait_until(pilot, lambda: not app.decisions[crawler].carried, "the fix recorded")
        with FeatureSession.open(search, read_only=True) as s:
            assert s.journal_decisions[crawler].action == "fix" and s.journal_decisions[crawler].decided_by == "alice"
            assert crawler in s.round_triage()
        assert "[12/16]" in screen_text(app)  # still decided: now in this round


@aio
async def test_the_detail_shows_the_evaluation_contract(tmp_path):
    cache = real_copy(tmp_path, "2026-08-11_report-cache")
    app = ScarsApp(cache, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        await filter_by(app, pilot, "markdown renderer")
        detail = detail_text(app)
        assert "Evaluation Contract (pre-thinking.md):" in detail
        assert "Primary evaluator: `pytest tests/test_cache.py tests/test_render.py` on a checkout" in detail
        assert "Pass signal: both runs green" in detail and "Fail signal: any test red" in detail
        # An item-level where is the item's location; the report's debt_location is the report's.
        assert "Where: reports/render_md.py:40" in detail
        assert "Report's debt_location: reports/render.py, reports/render_md.py" in detail


@aio
async def test_a_closed_rounds_decisions_carry_its_round_whoever_recorded_it(search):
    """Round 1 is the loop's (carried: ``A acc r1``); round 2 is decided in scars and closed: after
    reopening, its fix reads ``F fix r2`` — one label for a closed round's decision (issue 29)."""
    with FeatureSession.open(search, user="alice") as s:
        (depth,) = [i.id for i in s.feature.items if i.text.startswith("Crawl depth")]
        s.start_round()
        s.decide(depth, "fix")
        s.close_round("continue", "round 3 takes the rest", budget_spent={}, evidence_gained=[], residual_risk=[])
    app = ScarsApp(search, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await start(app, pilot)
        assert "A acc r1" in screen_text(app)
        assert app.decisions[depth].round_label == 2 and not app.decisions[depth].carried
        await filter_by(app, pilot, "crawl depth")
        assert "F fix r2" in screen_text(app)
    # Decided again in round 3 (open): a decision of the round in progress has no round label.
    with FeatureSession.open(search, user="alice") as s:
        s.start_round()
        s.decide(depth, "defer", reason="the deep-site work moves to v2")
        assert s.decisions[depth].round_label is None
        assert decision_mark(s.decisions[depth]) == "D defer"
