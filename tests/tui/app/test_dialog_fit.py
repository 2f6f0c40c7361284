"""The dialogs show what they are about (issue 32's rough edges): a bulk confirmation and the
defer form list every item, one row each, with no half-empty dialog beside a tiny list (before:
at 80x24 two of three items in a three-row scroll area, a long one wrapped over two); a form's
fields look like fields; a chart's title and legend wrap instead of being cut (the trends screen
at 60 columns)."""

from __future__ import annotations

import pytest
from rich.console import Console

from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.confirm import ConfirmBulk
from scars.tui.app.screens.forms import AcceptForm, DeferForm
from scars.tui.app.widgets.chart import BarChart, Series
from tests.factories import wait_until
from tests.tui.app.test_app_pilot import aio, on_screen, start

ITEMS = [
    "ks-82dea54b69  Retry count for uploads is hard-coded to 3",
    "ks-9e12bd8b69  Batch size is fixed at 500 rows; large ledgers take many round trips to the server",
    "sf-7c43f18592  Timezone-naive timestamps compare as UTC",
]


def _no_errors(action, fields):
    return []


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.parametrize("dialog", ["bulk", "defer", "accept"])
@aio
async def test_every_item_of_a_dialog_is_one_whole_row(feature_dir, size, dialog):
    app = ScarsApp(feature_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        if dialog == "bulk":
            app.push_screen(ConfirmBulk("defer", ITEMS))
            name, listing = "ConfirmBulk", "#confirm-list"
        else:
            form = DeferForm if dialog == "defer" else AcceptForm
            app.push_screen(form(ITEMS, _no_errors))
            name, listing = form.__name__, "#form-subjects"
        await on_screen(app, pilot, name)
        await wait_until(pilot, lambda: bool(app.screen.query(listing)), "the dialog composed")
        box = app.screen.query_one(listing)
        rows = list(box.query(".form-subject"))
        await wait_until(pilot, lambda: rows and all(r.region.height for r in rows), "the dialog laid out")
        assert len(rows) == len(ITEMS)
        assert [r.region.height for r in rows] == [1, 1, 1]  # the long one is cut, not wrapped
        assert box.max_scroll_y == 0  # every item in view, none behind a scroll
        assert box.region.height == len(ITEMS)
        if dialog != "bulk":
            body = app.screen.query_one("#form-body")
            # the fields take what they need (here all of them fit): no empty rows below them
            assert body.max_scroll_y == 0 and body.region.height == body.virtual_size.height
            field = app.screen.query_one("Input")
            assert field.styles.border_left[0] != ""  # a field is marked as one on its single row


def _chart() -> BarChart:
    series = [Series("fixed", [2, 0]), Series("accepted", [1, 0], "▓"), Series("deferred", [1, 0], "░")]
    return BarChart("Decisions per round: fixed █ / accepted ▓ / deferred ░", ["R1", "now"], series, height=4)


@pytest.mark.parametrize("width", [40, 56, 80])
def test_a_charts_title_and_legend_wrap_and_the_grid_is_cropped(width):
    console = Console(width=width, record=True, color_system=None)
    console.print(_chart())
    lines = console.export_text().splitlines()
    assert all(len(line) <= width for line in lines)
    text = " ".join(line.strip() for line in lines)
    assert "Decisions per round: fixed █ / accepted ▓ / deferred ░" in text
    assert "░░ deferred" in text
    title_rows = next(n for n, line in enumerate(lines) if "┤" in line)
    assert title_rows == (1 if width >= 56 else 2)  # wrapped only where it does not fit
