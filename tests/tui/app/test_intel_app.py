"""The app shows an item reopened by a fired watch with its cause (issue 5)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import app_repo, wait_settled


def _detail(app: ScarsApp) -> str:
    from rich.console import Console

    console = Console(width=400, color_system=None, file=None, record=True)
    with console.capture() as cap:
        console.print(app.screen.query_one("#detail").content)
    return cap.get()


async def _first_row(fdir) -> str:
    """The item of the row the app starts on."""
    app = ScarsApp(fdir, user="alice")
    async with app.run_test(size=(120, 40)) as pilot:
        await app.wait_loaded()
        await wait_settled(pilot, "the load shown and laid out")
        return app.screen.query_one(ItemList).current_row.item_id


def test_detail_pane_shows_the_reopen_cause(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    fdir = app_repo(root)

    item_id = asyncio.run(_first_row(fdir))
    with FeatureSession.open(fdir, user="alice") as s:
        s.decide(
            item_id,
            "accept",
            re_review_signal="retries start",
            owner="bob",
            rationale="one path today",
            watch="path-changed: src/*.py",
        )
        s.reopen(item_id, cause="src/export.py changed since 0123456789ab", watch="path-changed: src/*.py")

    async def shown() -> str:
        app = ScarsApp(fdir, user="alice")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_loaded()
            await wait_settled(pilot, "the load shown and laid out")
            assert app.screen.query_one(ItemList).current_row.item_id == item_id
            return _detail(app)

    text = asyncio.run(shown())
    assert "Reopened by a watch: src/export.py changed since 0123456789ab" in text
    assert "path-changed: src/*.py" in text


def test_a_cursor_step_reads_nothing_from_disk_for_the_reopen(tmp_path, monkeypatch):
    """The pane stat-ed the journal and the watch log on every item shown and replayed the whole
    journal whenever it changed (issue 31): the reopen records now come from the session's own
    replay, computed once per load or decision."""
    from scars.core.samsara import decisions, watches

    root = tmp_path / "repo"
    root.mkdir()
    fdir = app_repo(root)

    first = asyncio.run(_first_row(fdir))  # the row the app starts on (it is undecided again after the reopen)
    with FeatureSession.open(fdir, user="alice") as s:
        s.decide(first, "accept", re_review_signal="retries start", owner="bob", rationale="one path today")
        s.reopen(first, cause="src/export.py changed since 0123456789ab", watch="path-changed: src/*.py")

    real_stat = Path.stat

    def no_state_files(self, *a, **k):  # the journal and the watch log: never for a shown item
        if self.name in ("journal.jsonl", "watches.jsonl"):
            raise AssertionError(f"the detail pane read {self.name}")
        return real_stat(self, *a, **k)

    def no_disk(*a, **k):
        raise AssertionError("the detail pane replayed the journal or read the watch log")

    async def steps() -> list[str]:
        app = ScarsApp(fdir, user="alice")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_loaded()
            await wait_settled(pilot, "the load shown and laid out")
            items = app.screen.query_one(ItemList)
            assert items.current_row.item_id == first
            seen = []
            for key in ("j", "k", "j", "k"):
                await pilot.press(key)
                await wait_settled(pilot, "the step shown")
                # what a cursor step runs, synchronously (no timer of the app in between)
                with monkeypatch.context() as m:
                    m.setattr(Path, "stat", no_state_files)
                    m.setattr(decisions, "feature_state", no_disk)
                    m.setattr(watches, "read_watch_log", no_disk)
                    app.screen.show_detail(items.current_row)
                if items.current_row.item_id == first:
                    seen.append(_detail(app))
            return seen

    shown = asyncio.run(steps())
    assert len(shown) == 2 and all("Reopened by a watch: src/export.py changed since 0123456789ab" in t for t in shown)
