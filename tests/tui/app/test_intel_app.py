"""The app shows an item reopened by a fired watch with its cause (issue 5)."""

from __future__ import annotations

import asyncio

from scars.core.samsara.session import FeatureSession
from scars.tui.app.app import ScarsApp
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import app_repo, wait_settled  # noqa: E402


def _detail(app: ScarsApp) -> str:
    from rich.console import Console

    console = Console(width=400, color_system=None, file=None, record=True)
    with console.capture() as cap:
        console.print(app.screen.query_one("#detail").content)
    return cap.get()


def test_detail_pane_shows_the_reopen_cause(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    fdir = app_repo(root)

    async def first_item() -> str:
        app = ScarsApp(fdir, user="alice")
        async with app.run_test(size=(120, 40)) as pilot:
            await app.wait_loaded()
            await wait_settled(pilot, "the load shown and laid out")
            return app.screen.query_one(ItemList).current_row.item_id

    item_id = asyncio.run(first_item())
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
