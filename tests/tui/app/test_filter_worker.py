"""The filter's rows are built in a thread worker, superseded by the next keystroke (issue 17):
typed fast, the list ends on the rows of the last filter, and the rows of a filter typed before
it never land after them."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from textual.widgets import Input

from scars.tui.app.app import ScarsApp
from scars.tui.app.viewmodel import parse_filter
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import filter_shown, long_repo, wait_until
from tests.tui.app.test_app_pilot import aio, start

TYPED = "task-12"


@pytest.fixture
def long_dir(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return long_repo(root)


@aio
async def test_typed_fast_the_list_ends_on_the_last_filter_and_no_stale_rows_land_after(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=(80, 24)) as pilot:
        await start(app, pilot)
        state = app.state
        real_rows = state.rows

        # The broader a filter, the longer its rows take here (as with many matches): every prefix
        # of TYPED finishes after TYPED itself, the case a stale result would land in.
        started: set[str] = set()
        built: dict[str, int] = {}  # filter -> how many rows its worker built

        def slow_rows(flt, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
            source = flt.source if flt is not None else ""
            started.add(source)
            time.sleep(0.1 * (len(TYPED) - len(source)))
            rows = real_rows(flt, *args, **kwargs)
            built[source] = len(rows)
            return rows

        state.rows = slow_rows  # type: ignore[method-assign]
        items = app.screen.query_one(ItemList)
        landed: list[list] = []
        set_rows = items.set_rows

        def recording(rows, **kwargs):  # noqa: ANN001, ANN003, ANN202
            landed.append(list(rows))
            return set_rows(rows, **kwargs)

        items.set_rows = recording  # type: ignore[method-assign]
        await pilot.press("slash")
        box = app.screen.query_one("#filter", Input)
        for k in range(1, len(TYPED) + 1):
            # The next key as soon as the rows of this one are being built (a worker superseded
            # before it starts never runs: that case proves nothing).
            box.value = TYPED[:k]
            await wait_until(pilot, lambda k=k: TYPED[:k] in started, f"the rows of {TYPED[:k]!r} being built")
        await filter_shown(pilot, TYPED)
        for _ in range(3):  # a stale worker still running would land meanwhile
            await pilot.pause()
        expected = real_rows(parse_filter(TYPED), app.decisions, app.marked)
        assert {r.item_id for r in expected if r.item_id} and len(expected) < len(real_rows(None))
        assert items.rows == expected
        assert landed and landed[-1] == expected
        assert all(w.is_finished for w in app.workers)
        # A superseded worker stops at its next step instead of building rows nobody will see.
        await wait_until(pilot, lambda: len(built) == len(TYPED), "every started worker returned")
        assert {f: n for f, n in built.items() if f != TYPED} == {TYPED[:k]: 0 for k in range(1, len(TYPED))}
