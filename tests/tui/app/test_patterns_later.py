"""Issue 17: the possible patterns never block the app's first paint. A feature read (not found in
the cache) with many counted items is shown without them while they are computed; their group
joins the list when they are ready, the cursor staying on its item. Their computation is held
here (an event the test sets), so the list is seen before them, never by timing."""

from __future__ import annotations

import threading

from scars.core.samsara import aggregate
from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.main import PATTERNS_PENDING
from tests.factories import bench_feature, laid_out, wait_until
from tests.tui.app.test_app_pilot import SIZE, aio, current_item, record_notes


def _held_patterns(tmp_path, monkeypatch):
    """A feature with "many" counted items (this one's) whose possible patterns, once started, are
    held until the test sets ``release``; ``started`` is set when they are. (dir, release, started)"""
    feature_dir = bench_feature(tmp_path / "repo")
    monkeypatch.setattr(aggregate, "PATTERNS_EARLY_FROM", 1)
    release, started = threading.Event(), threading.Event()
    real = aggregate.possible_patterns

    def held(*args):
        started.set()
        assert release.wait(60), "never released"
        return real(*args)

    monkeypatch.setattr(aggregate, "possible_patterns", held)
    return feature_dir, release, started


async def shown_early(app: ScarsApp, pilot) -> None:
    """The list shown before its possible patterns (the load still on, held): the early Loaded
    handled and the screen laid out (the test helpers' start waits for the patterns too)."""
    await app.wait_loaded()
    await wait_until(pilot, lambda: app.patterns_pending and laid_out(app), "the list shown, the patterns pending")


@aio
async def test_the_list_is_shown_before_the_possible_patterns_and_their_group_joins_it(tmp_path, monkeypatch):
    feature_dir, release, started = _held_patterns(tmp_path, monkeypatch)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await shown_early(app, pilot)
        items = app.screen.items
        try:
            await wait_until(pilot, started.is_set, "the possible patterns computed")  # and held there
            groups = {r.group for r in items.rows}  # shown while they are computed
            assert "unaddressed" in groups and "possible_patterns" not in groups and not app.feature.possible_patterns
            notes = record_notes(app)
            await pilot.press("down", "f")  # the cursor moves; a decision waits for the patterns
            await wait_until(pilot, lambda: notes, "the decision refused")
            assert notes == [("Not recorded yet", PATTERNS_PENDING)] and not app.decisions
            item = current_item(app)
        finally:
            release.set()
        await wait_until(
            pilot, lambda: any(r.group == "possible_patterns" for r in items.rows), "the possible patterns' group"
        )
        assert current_item(app) == item  # the cursor stayed on its item
        assert app.feature.possible_patterns and app.backend.session.feature is app.feature
        await pilot.press("f")
        await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")


@aio
async def test_the_possible_patterns_join_the_list_under_a_filter_being_typed_that_does_not_parse(
    tmp_path, monkeypatch
):
    """The list keeps the rows of the last filter that parsed while a bad one is typed; the
    patterns arriving then join those rows (they waited for the next edit of the filter), and the
    filter's error stays shown."""
    from textual.widgets import Static

    feature_dir, release, started = _held_patterns(tmp_path, monkeypatch)
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=SIZE) as pilot:
        await shown_early(app, pilot)
        items = app.screen.items
        try:
            await wait_until(pilot, started.is_set, "the possible patterns computed")
            await pilot.press("slash", "c", "a", "t", "colon", "x", "x")
            status = app.screen.query_one("#filter-status", Static)
            await wait_until(pilot, lambda: "✗" in str(status.render()), "the filter's error shown")
        finally:
            release.set()
        await wait_until(
            pilot, lambda: any(r.group == "possible_patterns" for r in items.rows), "the possible patterns' group"
        )
        assert "✗" in str(status.render())
