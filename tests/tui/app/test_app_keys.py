"""Every key of the main screen, pressed as a person presses it, on a list longer than the screen
(84 items at 80x24), with what it leaves on disk.

Each test names the binding ids it covers (``@covers``); ``test_every_binding_has_a_key_test``
fails when a binding of ``MAIN_BINDINGS`` (the one list docs/app.md's key table, ``?`` and the palette
come from) has none. Keys are pressed by their key name (``down``, ``pagedown`` …), never by
calling the action: the arrows once scrolled the view without moving the cursor (ScrollView's own
bindings won over the screen's) on lists longer than the screen only.
"""

from __future__ import annotations

import gc
import html
import re
import threading
import traceback
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from scars.tui.app.app import ScarsApp
from scars.tui.app.screens.main import MAIN_BINDINGS
from scars.tui.app.widgets.detail import DetailPane
from scars.tui.app.widgets.header import ScarsHeader
from scars.tui.app.widgets.item_list import ItemList
from tests.factories import LONG_TAIL, filter_shown, long_repo, report, wait_settled, wait_until, write_feature
from tests.tui.app.test_app_pilot import (
    aio,
    current_item,
    detail_text,
    fill,
    on_disk,
    on_screen,
    record_notes,
    screen_text,
    screen_text_lines,
    start,
)

SMALL = (80, 24)
COVERED: set[str] = set()


def covers(*binding_ids: str) -> Callable:
    def mark(fn: Callable) -> Callable:
        COVERED.update(binding_ids)
        return fn

    return mark


@pytest.fixture
def long_dir(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    return long_repo(root)


def items(app: ScarsApp) -> ItemList:
    return app.screen.query_one(ItemList)


def cursor_in_view(app: ScarsApp) -> bool:
    lst = items(app)
    top = int(lst.scroll_offset.y)
    return top <= lst.cursor < top + lst.scrollable_content_region.height


def screen_cells(app: ScarsApp) -> list[str]:
    """The screen as rows of cells: each text run of the screenshot at its column (x / cell width),
    blanks where nothing is drawn, so a column range cuts out one widget."""
    svg = app.export_screenshot()
    width = app.size.width
    cells = [[" "] * width for _ in range(app.size.height)]
    ys: dict[str, int] = {}
    for m in re.finditer(r'<text class="[^"]*" x="([^"]*)" y="([^"]*)"[^>]*>([^<]*)</text>', svg):
        row = ys.setdefault(m.group(2), len(ys))
        col = round(float(m.group(1)) / 12.2)  # the screenshot's cell width (Textual's SVG export)
        for k, ch in enumerate(html.unescape(m.group(3)).replace("\xa0", " ")):
            if row < len(cells) and col + k < width:
                cells[row][col + k] = ch
    return ["".join(r) for r in cells]


def current_item_text(app: ScarsApp) -> str:
    """The text of the item under the cursor, as the report gives it."""
    return app.state.views[current_item(app)].item.text


def shown_item(app: ScarsApp) -> str:
    """The item id the detail pane shows (its first line names it)."""
    found = re.search(r"\b(?:ks|sf|ua)-[0-9a-f]{10}\b", detail_text(app).splitlines()[0])
    return found.group(0) if found else ""


async def decide_here_with_f(app: ScarsApp, pilot, feature: Path) -> str:
    """`f` decides the item the cursor and the detail show: the one on disk afterwards."""
    item = current_item(app)
    assert item is not None and shown_item(app) == item and cursor_in_view(app)
    await pilot.press("f")
    await wait_until(pilot, lambda: item in app.decisions, "the fix recorded")
    assert on_disk(feature)[item].action == "fix"
    return item


@covers("scars.down", "scars.up")
@aio
async def test_arrow_keys_move_the_cursor_past_the_screen(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        first = current_item(app)
        height = items(app).scrollable_content_region.height
        for _ in range(height + 5):
            await pilot.press("down")
        assert items(app).cursor == height + 5 + 1  # row 0 is the group header
        assert cursor_in_view(app) and int(items(app).scroll_offset.y) > 0
        decided = await decide_here_with_f(app, pilot, long_dir)
        assert decided != first
        for _ in range(height + 6):
            await pilot.press("up")
        assert current_item(app) == first and cursor_in_view(app)
        for _ in range(3):
            await pilot.press("j")
        await pilot.press("k")
        assert items(app).cursor == 3


@covers("scars.page_down", "scars.page_up", "scars.first", "scars.last")
@aio
async def test_paging_and_home_end_move_the_cursor(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("pagedown", "pagedown")
        page = items(app).scrollable_content_region.height - 1
        assert items(app).cursor == 1 + 2 * page and cursor_in_view(app)
        await decide_here_with_f(app, pilot, long_dir)
        await pilot.press("pageup")
        assert items(app).cursor == 2 + page and cursor_in_view(app)  # f moved one down first
        await pilot.press("end")
        last = items(app).rows[-1].item_id
        assert current_item(app) == last and cursor_in_view(app)
        assert await decide_here_with_f(app, pilot, long_dir) == last
        await pilot.press("home")
        assert items(app).cursor == 1 and int(items(app).scroll_offset.y) == 0


@covers("scars.next_undecided", "scars.fix")
@aio
async def test_n_skips_decided_items(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        first = await decide_here_with_f(app, pilot, long_dir)
        second = current_item(app)
        await pilot.press("f", "home", "n")
        assert current_item(app) not in (first, second) and current_item(app) not in app.decisions
        assert set(on_disk(long_dir)) == {first, second}


@covers("scars.accept", "scars.defer", "scars.undo")
@aio
async def test_accept_defer_and_undo_of_the_last(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        a = current_item(app)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        fill(app, re_review_signal="a second worker appears", owner="ops", rationale="x1")
        await pilot.press("enter", "enter", "enter", "enter")
        await wait_until(pilot, lambda: a in app.decisions, "the accept recorded")
        d = current_item(app)
        await pilot.press("d")
        await on_screen(app, pilot, "DeferForm")
        app.screen.query_one("#field-reason").value = "the queue rework lands first"
        await pilot.press("enter", "enter")
        await wait_until(pilot, lambda: d in app.decisions, "the defer recorded")
        disk = on_disk(long_dir)
        assert (disk[a].action, disk[a].owner, disk[d].action, disk[d].reason) == (
            "accept",
            "ops",
            "defer",
            "the queue rework lands first",
        )
        await pilot.press("u")
        await wait_until(pilot, lambda: d not in app.decisions, "the defer undone")
        assert d not in on_disk(long_dir) and a in on_disk(long_dir)
        assert any(m.startswith(f"Undid defer of {d} “Item 1.2") for _, m in notes)  # says which


@covers("scars.mark", "scars.bulk_fix", "scars.bulk_accept", "scars.bulk_defer")
@aio
async def test_marks_and_the_three_bulk_keys(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        batches: list[list[str]] = []
        for key in ("F", "A", "D"):
            ids = []
            for _ in range(2):
                ids.append(current_item(app))
                await pilot.press("space")
            assert set(ids) <= app.marked
            batches.append(ids)
            await pilot.press(key)
            await on_screen(app, pilot, "ConfirmBulk")
            await pilot.press("y", "enter")  # y marks yes, Enter records it
            if key == "A":
                await on_screen(app, pilot, "AcceptForm")
                fill(app, re_review_signal="load doubles", owner="ops", rationale="rare")
                await pilot.press("enter", "enter", "enter", "enter")
            elif key == "D":
                await on_screen(app, pilot, "DeferForm")
                await pilot.press("enter", "enter")
            await wait_until(pilot, lambda ids=ids: all(i in app.decisions for i in ids), f"the {key} batch")
        disk = on_disk(long_dir)
        assert [[disk[i].action for i in b] for b in batches] == [["fix"] * 2, ["accept"] * 2, ["defer"] * 2]
        assert not app.marked


@aio
async def test_a_filter_keeps_the_cursor_on_its_item_else_on_the_nearest_row_still_listed(long_dir):
    """The cursor stays on its item when the filter still lists it; when the filter drops it, it
    goes to the row nearest to it in the list before the filter (it stayed at the same index: on
    an item that was nowhere near it, here Item 3.3 for Item 1.3)."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("down", "down")

        def cursor_text() -> str:
            return current_item_text(app).split(":")[0]

        async def filter_at_once(text: str) -> None:  # typed, each prefix would be a filter of its own
            app.screen.apply_filter(text)
            await filter_shown(pilot, text)

        assert cursor_text() == "Item 1.3"
        await filter_at_once("task:task-1,task-3")
        assert cursor_text() == "Item 1.3"  # still listed: the same item
        await filter_at_once("task:task-3")
        assert cursor_text() == "Item 3.1"  # Items 1.4 … 1.7 dropped too: 3.1 is the nearest kept
        await pilot.press("down", "down", "down")
        await filter_at_once("")
        assert cursor_text() == "Item 3.4"
        await filter_at_once("task:task-2,task-5")
        assert cursor_text() == "Item 2.7"  # 3 rows before Item 3.4, Item 5.1 11 rows after it


@covers("scars.filter", "scars.clear_filter")
@aio
async def test_filter_keeps_the_cursor_in_view_and_escape_clears_it(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("end")  # the cursor on the last row, at the bottom of the screen
        await pilot.press("slash")
        assert cursor_in_view(app)  # the filter bar took rows from the list: the cursor stayed in view
        for ch in "task-12":
            await pilot.press(ch)
        await wait_until(pilot, lambda: app.filter is not None and app.filter.source == "task-12", "filtered")
        await wait_until(pilot, lambda: all(w.is_finished for w in app.workers), "rows shown")
        await pilot.press("enter")
        assert {r.item_id.split("-")[0] for r in items(app).rows if r.kind == "item"} == {"ks"}
        assert "Item 12." in detail_text(app)
        await decide_here_with_f(app, pilot, long_dir)
        await pilot.press("slash", "space", "c", "a", "t", "colon", "x", "x")
        await wait_until(pilot, lambda: "unknown category 'xx'" in screen_text(app), "the filter's own error")
        assert "No scar items in this feature" not in screen_text(app)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.filter is None and all(w.is_finished for w in app.workers), "cleared")
        assert len([r for r in items(app).rows if r.kind == "item"]) == 84 and items(app).has_focus


@aio
async def test_a_filter_matching_nothing_says_so(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("slash", "z", "q", "z")
        await wait_until(pilot, lambda: "No item matches the filter “zqz”" in screen_text(app), "the empty result")


@aio
async def test_a_filter_that_does_not_parse_says_why_and_no_earlier_result_hides_it(long_dir):
    """Issue 16: `cat:xx` showed "No scar items in this feature."; then the result of `cat` (typed
    on the way to `cat:xx`) arrived after the error and replaced it with "0 item row(s) match"
    under "No item matches the filter “cat”"."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("slash", *"cat:xx")
        await wait_until(pilot, lambda: "unknown category 'xx'" in screen_text(app), "the error said")
        await wait_settled(pilot, "every filter worker done, its result handled")  # `cat`'s too
        text = screen_text(app)
        assert "✗ unknown category 'xx' (use ks, sf or ua)" in text
        assert "row(s) match" not in text and "“cat”" not in text
        await pilot.press("backspace", "backspace", "s", "f")
        await wait_until(pilot, lambda: "0 item row(s) match" in screen_text(app), "cat:sf applied")


@aio
async def test_the_filter_bar_and_help_name_every_filter_key_and_state(long_dir):
    """The placeholder dropped `state:` values and `file:`, and `?` another set of states: both
    come from the filter's own rule now."""
    from scars.tui.app.viewmodel import STATES

    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=(120, 40)) as pilot:
        await start(app, pilot)
        await pilot.press("slash")
        await wait_until(pilot, lambda: app.screen.query_one("#filter").has_focus, "the filter open")
        bar = " ".join(screen_text_lines(app)[-4:])
        await pilot.press("escape", "question_mark")
        await wait_until(pilot, lambda: type(app.screen).__name__ == "HelpScreen", "help open")
        await wait_settled(pilot, "the help laid out")
        help_text = statics_text(app)
        for shown in (bar, help_text):
            for key in ("cat:ks|sf|ua", "task:NAME", "file:PART", "state:"):
                assert key in shown, (key, shown)
            assert "STATE: " + " ".join(STATES) in shown, shown


def statics_text(app: ScarsApp) -> str:
    """Every Static of the screen on top as plain text (a modal's body, unwrapped)."""
    return " ".join(str(w.render()) for w in app.screen.query("Static"))


@pytest.mark.parametrize(("size", "edge"), [((120, 40), "left"), ((80, 24), "top")], ids=["120x40", "80x24"])
@aio
async def test_tab_to_the_detail_marks_it_on_the_edge_beside_the_list(long_dir, size, edge):
    """Issue 16, focus nearly invisible: a second `DetailPane:focus` rule meant for the narrow
    layout applied at every width (with the detail side by side, Tab took away the line between
    the list and the detail), and below 100 columns the narrow layout's own border won over it
    (Tab changed nothing on the line)."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        pane = app.screen.query_one(DetailPane)
        unfocused = getattr(pane.styles, f"border_{edge}")
        await pilot.press("tab")
        await wait_until(pilot, lambda: pane.has_focus, "the detail focused")
        await wait_settled(pilot, "the focus's styles applied")
        focused = getattr(pane.styles, f"border_{edge}")
        assert focused[0] == unfocused[0] and focused[0] in ("vkey", "hkey")  # the same line, lit
        assert focused[1] != unfocused[1]


@covers("scars.detail_down", "scars.detail_up")
@aio
async def test_shift_j_and_k_scroll_the_detail_from_the_list(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        pane = app.screen.query_one(DetailPane)
        assert pane.max_scroll_y > 0  # the detail is longer than its pane at 80x24
        await pilot.press("J")
        assert pane.scroll_y > 0 and items(app).has_focus
        await pilot.press("K")
        assert pane.scroll_y == 0


@aio
async def test_the_list_redraws_in_its_focused_and_unfocused_colours(long_dir):
    """Issue 17: the list keeps its own style between repaints (not computed for every line):
    focus changes it (the focused list is tinted), and the lines drawn after must carry it."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        pane, lst = app.screen.query_one(DetailPane), items(app)

        def background() -> object:  # of a list row two below the cursor's (not the cursor's colours)
            return list(lst.render_line(lst.cursor - int(lst.scroll_offset.y) + 2))[0].style.bgcolor

        focused_list = background()
        await pilot.press("tab")
        await wait_until(pilot, lambda: pane.has_focus, "the detail focused")
        await wait_settled(pilot, "the focus's styles applied")
        focused_detail = background()
        assert focused_detail != focused_list  # the list's tint gone with its focus
        await pilot.press("tab")
        await wait_until(pilot, lambda: lst.has_focus, "the list focused again")
        await wait_settled(pilot, "the focus's styles applied")
        assert background() == focused_list


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
@aio
async def test_a_cursor_step_between_short_and_long_details_lays_nothing_out_again(tmp_path, size):
    """Issue 17, cursor step flat: the detail's scrollbar came with an item longer than the pane
    and went with a shorter one, and each time it did the whole screen was laid out again (and the
    detail rendered twice, at both widths). The bar stays (its track is drawn only when there is
    something to scroll), the text keeps one width, and a step lays nothing out."""
    texts = [f"Short item {k}" if k % 2 else f"Long item {k}.{LONG_TAIL * 2}" for k in range(1, 7)]
    feature = write_feature(tmp_path, {"task-1-scar.yaml": report("task-1", ks=[f'description: "{t}"' for t in texts])})
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)  # what the start left to lay out (late on a loaded machine) done too
        pane, screen = app.screen.query_one(DetailPane), app.screen
        layouts: list[object] = []
        refresh_layout = screen._refresh_layout

        def counted(*args, **kwargs):
            # where the layout came from (the last frames), shown if the assertion below fails
            layouts.append([f"{Path(f.filename).name}:{f.name}" for f in traceback.extract_stack(limit=14)])
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counted  # every layout of the screen (private to Textual 8.2)
        width = pane.scrollable_content_region.width
        track: dict[bool, object] = {}
        for _ in range(5):
            await pilot.press("down")
            await wait_until(pilot, lambda: shown_item(app) == current_item(app) != "", "the detail of the row")
            await wait_settled(pilot, "what the step set off done")
            long = current_item_text(app).startswith("Long")
            assert (pane.max_scroll_y > 0) == long
            assert pane.show_vertical_scrollbar and pane.scrollable_content_region.width == width
            track[long] = pane.vertical_scrollbar.render().style.bgcolor
        assert layouts == []
        assert track[False] == pane.background_colors[1].rich_color != track[True]  # no track when it fits


@pytest.mark.parametrize("size", [(80, 24), (120, 20)], ids=["80x24", "120x20"])
@aio
async def test_the_detail_draws_every_word_of_a_long_item_beside_its_scrollbar(long_dir, size):
    """Issue 17: the detail pane draws lines it rendered itself (a Line-API widget, not a Static
    laid out again on every cursor step). Lines rendered before its scrollbar appeared are two
    cells too wide: cropped to the pane, a word at the end of a line would lose its last cells.
    A filter matching nothing shows a one-line message (no scrollbar); clearing it brings the
    long item back, and its scrollbar with it."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        pane = app.screen.query_one(DetailPane)
        await pilot.press("slash", *"zzzz", "enter")
        await wait_until(pilot, lambda: not items(app).rows and pane.max_scroll_y == 0, "nothing listed")
        await pilot.press("escape")
        await wait_until(pilot, lambda: shown_item(app) == current_item(app) != "", "the item back in the detail")
        await pilot.press("tab")  # the detail focused: its own keys scroll it
        await wait_until(pilot, lambda: pane.has_focus, "the detail focused")
        assert pane.max_scroll_y > 0  # longer than the pane
        region = pane.content_region
        drawn: dict[int, str] = {}  # line of the detail -> its text on screen (the list beside it cut off)
        while True:
            rows = [row[region.x : region.right] for row in screen_cells(app)[region.y : region.bottom]]
            drawn.update({int(pane.scroll_y) + k: row for k, row in enumerate(rows)})
            if pane.scroll_y >= pane.max_scroll_y:
                break
            top = pane.scroll_y
            await pilot.press("pagedown")
            await wait_until(pilot, lambda top=top: pane.scroll_y > top, "the detail scrolled a page")
            await wait_settled(pilot, "the page drawn")
        words = re.findall(r"[\w.:,-]+", " ".join(drawn[k] for k in sorted(drawn)))
        expected = re.findall(r"[\w.:,-]+", current_item_text(app))
        at = words.index(expected[0])
        cut = next(((w, d) for w, d in zip(expected, words[at:]) if w != d), None)
        assert cut is None and len(words) - at >= len(expected), f"the detail draws {cut} (expected, drawn)"


@covers("scars.trends", "scars.help", "scars.palette", "scars.loops")
@aio
async def test_screens_open_and_close(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        for key, name, back in (
            ("t", "TrendsScreen", "escape"),
            ("question_mark", "HelpScreen", "escape"),
            ("ctrl+p", "CommandPalette", "escape"),
            ("L", "LoopsScreen", "q"),
        ):
            await pilot.press(key)
            await on_screen(app, pilot, name)
            await pilot.press(back)
            await on_screen(app, pilot, "MainScreen")


@covers("scars.gate")
@aio
async def test_gate_letters_choose_and_enter_in_the_reason_records(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("f", "g")
        await on_screen(app, pilot, "RoundGate")
        gate = app.screen
        await pilot.press(
            "b", "enter"
        )  # b marks stop, Enter records it: it needs a reason, refused, the reason focused
        await wait_until(pilot, lambda: gate.query_one("#gate-error").has_class("shown"), "the refusal")
        assert gate.query_one("#gate-reason").has_focus
        for ch in "bugs left are owned":
            await pilot.press("space" if ch == " " else ch)
        assert gate.query_one("#gate-reason").value == "bugs left are owned"  # a and b type here
        await pilot.press("enter")  # records the answer tried: stop
        log = long_dir / "iteration-log.yaml"
        await wait_until(pilot, lambda: "decision: stop" in log.read_text(), "the round recorded")
        assert 'decision_reason: "bugs left are owned"' in log.read_text()
        await wait_settled(pilot, "the reload after the round shown")


@aio
async def test_a_load_that_lands_while_the_screen_is_taken_down_is_dropped(long_dir):
    """Closing takes the main screen's widgets down one by one: a reload that lands then (the list
    still there, the header gone) is dropped, not a crash on the missing header (seen on a loaded
    machine after the round gate recorded and the test left)."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        late = app._loaded_message(app.backend, True, "disk", None, object())
        await app.screen.query_one(ScarsHeader).remove()
        app.on_scars_app_loaded(late)  # raised NoMatches('ScarsHeader') before
        assert app.screen.query(ItemList)


@covers("scars.swap_driver", "scars.sign_off")
@aio
async def test_pair_swap_and_sign_off(long_dir):
    app = ScarsApp(long_dir, pair=["alice", "bob"], require_second=["accept"])
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        item = current_item(app)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        fill(app, re_review_signal="a second worker", owner="ops", rationale="rare")
        await pilot.press("enter", "enter", "enter", "enter")
        await wait_until(pilot, lambda: item in app.decisions, "the accept recorded")
        await pilot.press("k", "p", "s")
        await wait_until(pilot, lambda: not app.decisions[item].pending_review, "the sign-off")
        d = on_disk(long_dir)[item]
        assert (d.decided_by, d.reviewed_by) == ("alice", "bob")


@covers("scars.reload")
@aio
async def test_r_reads_the_disk_again_and_says_what_changed(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: ("Reload", "Reloaded from disk: nothing changed.") in notes, "no change")
        (long_dir / "scar-reports" / "task-13-scar.yaml").write_text(
            'task_id: task-13\nknown_shortcuts:\n  - "A new shortcut the loop just wrote"\n', encoding="utf-8"
        )
        await pilot.press("r")
        await wait_until(pilot, lambda: any("1 new item" in m for _, m in notes), "the change told")
        assert any("signal_lost 84 → 85" in m for _, m in notes)
        assert len([r for r in items(app).rows if r.kind == "item"]) == 85


@contextmanager
def another_collection_under_way_at_the_next_collect(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The next ``gc.collect()`` (whichever thread asks) meets a collection under way in another
    thread, as it does now and then on a loaded machine: a helper thread is held inside a real
    young collection (its ``gc.callbacks`` start call waits) while the real ``gc.collect`` is
    called, which CPython 3.11 then skips (returns 0). Yields the returns of the collides."""
    real = gc.collect
    inside, release = threading.Event(), threading.Event()
    collided: list[int] = []

    def hold(phase: str, info: dict) -> None:
        if phase == "start" and threading.current_thread() is holder:
            inside.set()
            release.wait()

    def collect_young() -> None:
        while not inside.is_set():  # its own try may meet another collection: again until it ran
            real(0)  # young only: what a load unfroze is in the oldest generation, untouched

    holder = threading.Thread(target=collect_young, daemon=True)

    def collide(generation: int = 2) -> int:
        if collided:
            return real(generation)
        holder.start()
        inside.wait()
        try:
            collided.append(real(generation))
        finally:
            release.set()
            holder.join()
        return collided[0]

    gc.callbacks.append(hold)
    monkeypatch.setattr(gc, "collect", collide)
    try:
        yield collided
    finally:
        monkeypatch.setattr(gc, "collect", real)
        release.set()
        gc.callbacks.remove(hold)


@aio
async def test_a_reload_frees_the_cyclic_garbage_the_last_load_froze(long_dir, monkeypatch):
    """A load freezes what is alive out of the collector (issue 17); garbage in a reference
    cycle that was alive then is freed at the next reload, never kept until the app exits, even
    when the reload's collection meets another thread's (issue 26)."""

    class Cycle:
        pass

    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        held = Cycle()
        held.me = held  # type: ignore[attr-defined]  # only the collector can free it
        gone = weakref.ref(held)
        await start(app, pilot)  # the load froze `held` with everything else alive
        notes = record_notes(app)
        del held
        gc.collect()
        assert gone() is not None  # frozen: a collection does not see it
        with another_collection_under_way_at_the_next_collect(monkeypatch) as collided:
            await pilot.press("r")
            await wait_until(pilot, lambda: ("Reload", "Reloaded from disk: nothing changed.") in notes, "the reload")
        assert collided == [0]  # the reload's first collection was skipped
        assert gone() is None


@aio
async def test_opening_another_feature_frees_the_cyclic_garbage_the_last_load_froze(long_dir, tmp_path, monkeypatch):
    """The same for a switch to another feature (the Loops inbox's enter): the first feature's
    frozen garbage is freed by the next feature's load, its first collection skipped or not."""

    class Cycle:
        pass

    other = long_repo(tmp_path / "other")
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        held = Cycle()
        held.me = held  # type: ignore[attr-defined]  # only the collector can free it
        gone = weakref.ref(held)
        await start(app, pilot)
        del held
        gc.collect()
        assert gone() is not None  # frozen: a collection does not see it
        with another_collection_under_way_at_the_next_collect(monkeypatch) as collided:
            app.open_feature(other)
            await start(app, pilot)
        assert collided == [0]  # the load's first collection was skipped
        assert app.feature_dir == other and gone() is None


@covers("scars.quit")
@aio
async def test_q_quits_with_0(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: app.return_code is not None, "the app exited")
    assert app.return_code == 0 and app.return_value is None  # `scars triage` exits 0


@covers("scars.interrupt")
@aio
async def test_ctrl_c_in_a_form_exits_130_and_records_nothing(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        app.screen.query_one("#field-owner").value = "ops"
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: app.return_code is not None, "the app exited")
    assert app.return_value == 130 and on_disk(long_dir) == {}  # `scars triage` exits with it


@pytest.mark.parametrize("size", [(60, 20), (80, 24)], ids=["60x20", "80x24"])
@aio
async def test_form_and_gate_buttons_are_on_a_small_screen(long_dir, size):
    """Issue 16: at 60x20 the accept form's Save and the gate's Continue / Stop were off screen."""
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)

        def on_screen_whole(selector: str) -> bool:
            region = app.screen.query_one(selector).region
            return region.height == 1 and 0 <= region.y < size[1] and region.right <= size[0]

        await pilot.press("a")
        await on_screen(app, pilot, "AcceptForm")
        await wait_settled(pilot, "the form laid out")
        assert on_screen_whole("#form-save") and on_screen_whole("#form-cancel")
        await pilot.press("escape", "f", "g")
        await on_screen(app, pilot, "RoundGate")
        await wait_settled(pilot, "the gate laid out")
        assert all(on_screen_whole(b) for b in ("#gate-continue", "#gate-stop"))


def readme_key_table() -> str:
    """The key table of docs/app.md as MAIN_BINDINGS gives it: key names as `?` shows them, the description."""
    from textual.app import App
    from textual.binding import Binding

    app = App()

    def keys(b: Binding) -> str:
        return " ".join(f"`{app.get_key_display(Binding(k.strip(), ''))}`" for k in b.key.split(","))

    cells = [(keys(b), b.description.replace("|", "\\|")) for b in MAIN_BINDINGS]
    if len(cells) % 2:
        cells.append(("", ""))
    lines = ["| key | action | key | action |", "|---|---|---|---|"]
    lines += [f"| {a} | {b} | {c} | {d} |" for (a, b), (c, d) in zip(cells[::2], cells[1::2])]
    return "\n".join(lines) + "\n"


@aio
async def test_the_key_table_help_and_palette_list_the_same_bindings(long_dir):
    """The key table (docs/app.md, "Keys"), `?` and the command palette all come from MAIN_BINDINGS."""
    from scars.tui.app.palette import _commands
    from tests.factories import ROOT

    page = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")  # moved from the README (issue 32)
    assert readme_key_table() in page.split("\n## Keys\n", 1)[1].split("\n## ", 1)[0]
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=(120, 60)) as pilot:
        await start(app, pilot)
        palette = {name for name, _, _ in _commands(app.screen)}
        assert palette == {b.description for b in MAIN_BINDINGS if b.id != "scars.palette"}
        await pilot.press("question_mark")
        await on_screen(app, pilot, "HelpScreen")
        text = " ".join(screen_text(app).split())
        missing = [b.id for b in MAIN_BINDINGS if b.id not in text or " ".join(b.description.split()) not in text]
        assert missing == []


@covers("scars.zoom")
@aio
async def test_z_gives_the_detail_the_whole_screen_and_the_cursor_keys_still_move(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        pane = app.screen.query_one(DetailPane)
        small = pane.region.height
        await pilot.press("z")
        await wait_until(pilot, lambda: pane.region.height > small + 5, "the detail zoomed")
        assert not items(app).display
        first = shown_item(app)
        await pilot.press("j")
        assert shown_item(app) != first == items(app).rows[1].item_id
        await pilot.press("f")
        await wait_until(pilot, lambda: len(app.decisions) == 1, "the fix recorded")
        assert set(on_disk(long_dir)) == {items(app).rows[2].item_id}
        await pilot.press("z")
        await wait_until(pilot, lambda: items(app).display and pane.region.height == small, "the list back")
        # the focus is the list's again: an arrow moves its cursor, not the detail's scroll
        assert app.focused is items(app)
        before = items(app).cursor
        await pilot.press("down")
        await wait_until(pilot, lambda: items(app).cursor == before + 1, "the arrow moved the list")


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)], ids=["60x20", "80x24", "120x40"])
@aio
async def test_task_ids_whole_in_natural_order_and_the_bars_never_cut(long_dir, size):
    """Issue 16: `task-10` showed as `task-1` or `task-`, tasks sorted task-1, task-10, task-2,
    and the warning bar and the key hints ended in "…"."""
    (long_dir / "scar-reports" / "task-99-scar.yaml").write_text("- not a mapping\n", encoding="utf-8")
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        tasks = [app.state.views[r.item_id].item.task_id for r in items(app).rows if r.kind == "item"]
        assert list(dict.fromkeys(tasks)) == [f"task-{n}" for n in range(1, 13)]
        await pilot.press("end")
        lines = screen_text_lines(app)
        assert any(" task-12 " in line for line in lines)
        text = " ".join(" ".join(lines).split())
        assert "✗ 1 PARSE FAILURE in 1 file: not counted in signal_lost: scar-reports/task-99-scar.yaml" in text
        assert " ".join(lines[-1].split()).endswith("? Help q Quit") and "…" not in lines[-1]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)], ids=["60x20", "80x24", "120x40"])
@aio
async def test_the_header_never_cuts_the_loops_series(long_dir, size):
    """The header cut signal_lost's series at 120 columns (a feature name of 32 characters and three
    recorded points: `signal_lost 84 scars · loop` and nothing after it), and at 60 the sparkline took the
    room of the figures: signal_lost goes to a second line, and the sparkline goes before the text."""
    (long_dir / "iteration-log.yaml").write_text(
        "feature: long\nsignal_lost_initial: 120\nbudget:\n  max_rounds: 5\n  reviewer_retry_limit: 2\nrounds:\n"
        + "".join(
            f"  - round: {n}\n    signal_lost_before: {before}\n    signal_lost_after: {before - 10}\n"
            f'    decision: continue\n    decision_reason: "round {n} fixed the retry items"\n'
            for n, before in ((1, 120), (2, 110))
        ),
        encoding="utf-8",
    )
    feature = long_dir.rename(long_dir.parent / "2026-08-01_ledger-export-retries")
    app = ScarsApp(feature, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        lines = screen_text_lines(app)
        assert "2026-08-01_ledger-export-retries  [0/84]  round 3 of 5" in lines[0]
        assert "signal_lost 84 scars · loop 120→110→100" in " ".join(lines[:2])


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)], ids=["60x20", "80x24", "120x40"])
@aio
async def test_a_long_task_id_is_whole_where_the_row_has_room_and_keeps_its_end_elsewhere(long_dir, size):
    """Issue 16: task ids were cut at 80 and 120 columns; the column stopped at 14 cells, so the
    demo's `iteration-r1-blank-rows` and upstream's `iteration-r1-three-state-dry` (a fix round's
    report) showed as `iteration-r1-…`, whatever the room."""
    long_task = "iteration-r1-three-state-dry"
    report = long_dir / "scar-reports" / "task-3-scar.yaml"
    report.write_text(
        report.read_text(encoding="utf-8").replace("task_id: task-3", f"task_id: {long_task}"), encoding="utf-8"
    )
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=size) as pilot:
        await start(app, pilot)
        ids = [r.item_id for r in items(app).rows if r.kind == "item"]
        at = next(i for i, item in enumerate(ids) if app.state.views[item].task == long_task)
        for _ in range(at):
            await pilot.press("down")
        lines = screen_text_lines(app)
        row = next(line for line in lines if "▶" in line)
        if size[0] >= 80:
            assert f" {long_task} " in row
        else:  # 60 columns: the start and the end of the id, the text still readable
            assert re.search(r" iteration-\S*…\S*state-dry ", row), row
            assert "Item " in row


@covers("scars.undo_item")
@aio
async def test_shift_u_undoes_an_earlier_decision_of_the_cursor_item(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        first = await decide_here_with_f(app, pilot, long_dir)
        second = await decide_here_with_f(app, pilot, long_dir)
        await pilot.press("home")
        assert current_item(app) == first
        await pilot.press("U")  # not the latest decision (second's): first's
        await wait_until(pilot, lambda: first not in app.decisions, "first undone")
        assert set(on_disk(long_dir)) == {second}
        assert any(m.startswith(f"Undid fix of {first}") for _, m in notes)


@covers("scars.next_same_task", "scars.prev_same_task")
@aio
async def test_brackets_jump_to_the_items_of_the_same_task(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("end")  # task-12's last item
        task = app.state.views[current_item(app)].item.task_id
        seen = []
        for _ in range(7):
            await pilot.press("right_square_bracket")
            seen.append(current_item(app))
            assert app.state.views[current_item(app)].item.task_id == task and cursor_in_view(app)
        assert len(set(seen)) == 7  # every item of the task, wrapping around
        await pilot.press("left_square_bracket")
        assert current_item(app) == seen[-2]
        await decide_here_with_f(app, pilot, long_dir)


@covers("scars.copy_id")
@aio
async def test_y_copies_the_item_id(long_dir):
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("j", "y")
        assert app.clipboard == current_item(app)


@covers("scars.edit")
@aio
async def test_e_opens_the_location_in_the_editor(long_dir, tmp_path, monkeypatch):
    from scars.core import settings

    called = tmp_path / "editor-args"
    editor = tmp_path / "bin" / "vim"  # a vi: the line as +LINE (scars.tui.app.editor)
    editor.parent.mkdir()
    editor.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {called}\n', encoding="utf-8")
    editor.chmod(0o755)
    monkeypatch.setenv("VISUAL", str(editor))
    settings.clear()
    root = long_dir.parents[1]
    (root / "src").mkdir()
    (root / "src" / "worker_1.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    report = long_dir / "scar-reports" / "task-1-scar.yaml"
    report.write_text(
        report.read_text(encoding="utf-8").replace("  - description:", "  - where: src/worker_1.py:3\n    what:", 1),
        encoding="utf-8",
    )
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        await pilot.press("e")
        await wait_until(pilot, called.exists, "the editor run")
        assert called.read_text(encoding="utf-8").split() == ["+3", str((root / "src" / "worker_1.py").resolve())]
        called.unlink()
        await pilot.press("j", "e")  # no `where`: the item's line in its scar report
        await wait_until(pilot, called.exists, "the editor run again")
        args = called.read_text(encoding="utf-8").split()
        assert args[1] == str(report) and args[0].startswith("+")


@aio
async def test_files_the_loop_writes_appear_by_themselves_keeping_cursor_and_marks(long_dir):
    app = ScarsApp(long_dir, user="alice")
    app.POLL_SECONDS = 0.1
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        notes = record_notes(app)
        await pilot.press("j", "j", "space")
        marked = set(app.marked)
        here = current_item(app)
        (long_dir / "scar-reports" / "task-13-scar.yaml").write_text(
            'task_id: task-13\nknown_shortcuts:\n  - "A new shortcut the loop just wrote"\n', encoding="utf-8"
        )
        await wait_until(pilot, lambda: any(t == "Reloaded" for t, _ in notes), "the change picked up")
        assert ("Reloaded", "Changed on disk: 1 new item, signal_lost 84 → 85.") in notes
        assert current_item(app) == here and app.marked == marked
        assert len([r for r in items(app).rows if r.kind == "item"]) == 85


def test_every_binding_has_a_key_test():
    ids = {b.id for b in MAIN_BINDINGS} | {"scars.interrupt"}
    assert sorted(ids - COVERED) == [] and sorted(COVERED - ids) == []


@aio
async def test_the_theme_of_config_toml_is_used_and_a_chosen_one_kept(long_dir, tmp_path, monkeypatch):
    """Issue 16: textual-dark was forced on mount; a theme chosen in the app was lost."""
    from scars.core import settings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    cfg = tmp_path / "scars" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text('# mine\ntheme = "nord"\nuser = "ann"\n', encoding="utf-8")
    monkeypatch.delenv("SCARS_USER", raising=False)
    settings.clear()
    app = ScarsApp(long_dir)
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        assert app.theme == "nord" and app.user == "ann"
        app.theme = "gruvbox"
        await wait_until(pilot, lambda: 'theme = "gruvbox"' in cfg.read_text(encoding="utf-8"), "the theme kept")
    assert cfg.read_text(encoding="utf-8") == '# mine\ntheme = "gruvbox"\nuser = "ann"\n'


@aio
async def test_columns_of_config_toml(long_dir, tmp_path, monkeypatch):
    from scars.core import settings

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    (tmp_path / "scars").mkdir()
    (tmp_path / "scars" / "config.toml").write_text('columns = ["task"]\n', encoding="utf-8")
    settings.clear()
    app = ScarsApp(long_dir, user="alice")
    async with app.run_test(size=SMALL) as pilot:
        await start(app, pilot)
        row = next(line for line in screen_text_lines(app) if "Item 1.1" in line)
        assert "todo" not in row and " ks " not in row and "task-1 " in row
