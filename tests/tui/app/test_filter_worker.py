"""The filter's rows are built in a thread worker, superseded by the next keystroke (issue 17):
typed fast, the list ends on the rows of the last filter, and the rows of a filter typed before
it never land after them."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from textual.widgets import Input

from scars.tui.app.app import ScarsApp
from scars.tui.app.viewmodel import parse_filter
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import filter_shown, long_repo, wait_settled, wait_until
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

        # The broader a filter, the longer its rows take (as with many matches). Here each prefix of
        # TYPED builds its rows only once the next one's worker has started (which cancels it), and
        # the last prefix only once TYPED's rows are built: the case a stale result would land in.
        # (A fixed delay instead let a loaded machine cancel a prefix's worker too late; and the
        # workers share the event loop's default executor, a few threads: only two wait at once.)
        started: set[str] = set()
        built: dict[str, int] = {}  # filter -> how many rows its worker built
        began = {TYPED[:k]: threading.Event() for k in range(1, len(TYPED) + 1)}
        last_built = threading.Event()

        def slow_rows(flt, *args, **kwargs):
            source = flt.source if flt is not None else ""
            started.add(source)
            if source in began:
                began[source].set()
                after = last_built if len(source) == len(TYPED) - 1 else began.get(TYPED[: len(source) + 1])
                if source != TYPED and after is not None:
                    after.wait(timeout=60)  # bounds a hang only: the assertions below say what failed
            rows = real_rows(flt, *args, **kwargs)
            built[source] = len(rows)
            if source == TYPED:
                last_built.set()
            return rows

        state.rows = slow_rows  # type: ignore[method-assign]
        items = app.screen.query_one(ItemList)
        landed: list[list] = []
        set_rows = items.set_rows

        def recording(rows, **kwargs):
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
        # A superseded worker is finished (cancelled) while its thread still runs: each one's
        # return waited for, and what it posted handled, before looking at what landed.
        await wait_until(pilot, lambda: len(built) == len(TYPED), "every started worker returned")
        await wait_settled(pilot, "what the returned workers posted handled")
        expected = real_rows(parse_filter(TYPED), app.decisions, app.marked)
        assert {r.item_id for r in expected if r.item_id} and len(expected) < len(real_rows(None))
        assert items.rows == expected
        assert landed and landed[-1] == expected
        assert all(w.is_finished for w in app.workers)
        # A superseded worker stops at its next step instead of building rows nobody will see.
        assert {f: n for f, n in built.items() if f != TYPED} == {TYPED[:k]: 0 for k in range(1, len(TYPED))}
