"""The grouped item list: a Line-API widget that draws only the rows on screen.

Rows come from ``scars.tui.app.viewmodel.TriageState.rows`` (headers, items, pattern labels,
parse failures). A row's text is precomputed and inert; its decision word is looked up at
draw time, so deciding an item redraws one line and rebuilds nothing. ``set_rows`` merges
on the rows' stable keys: the cursor stays on the same item after a filter or a reload (on the
nearest row still listed when the item is not).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from scars.core import settings
from scars.core.sanitize import one_line
from scars.tui.app.viewmodel import CATEGORY_ABBR, ItemViews, Row, decision_mark, decision_state
from scars.tui.app.widgets.base_style import BaseStyleCache

DECISION_WIDTH = 9
TASK_WIDTH = 14
TEXT_ROOM = 24  # the cells of the item's text a long task id leaves it, where the row has them


class ItemList(BaseStyleCache, ScrollView, can_focus=True, inherit_bindings=False):
    """Grouped scar items; only visible rows are rendered.

    It inherits no bindings: ScrollView's own (up, down, pageup, pagedown, home, end) would
    scroll the view without moving the cursor once the list is longer than the screen. The
    screen's bindings move the cursor, and the view follows it.
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "item-list--header",
        "item-list--pattern",
        "item-list--cursor",
        "item-list--marked",
        "item-list--failure",
        "item-list--fix",
        "item-list--accept",
        "item-list--pending",
        "item-list--defer",
        "item-list--undecided",
        "item-list--dim",
    }

    class Highlighted(Message):
        """The cursor moved to ``row`` (None when the list is empty)."""

        def __init__(self, row: Row | None) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list[Row] = []
        self.cursor: int = 0
        self._key_index: dict[str, int] | None = None
        self.views: ItemViews = ItemViews(())
        self.decisions_source: Callable[[], Mapping[str, Any]] = dict
        self.marked: set[str] = set()
        self.placeholder = "Loading…"
        self._task_width: tuple[int, int] = (0, 0)  # (id of the views it was measured on, longest task)

    # -- data -------------------------------------------------------------------------
    def set_rows(self, rows: list[Row], *, keep: bool = True) -> None:
        """Replace the rows, keeping the cursor on the same row key, else on the same item (in
        another group), else on the row nearest to it in the old rows that is still there (a
        filter that drops the cursor's item, a reload where it went)."""
        old_rows, old_index = self.rows, self.cursor
        current = self.current_row if keep else None
        self.rows = rows
        self._key_index = None  # built on first use: most row sets never need it
        new = None
        if current is not None:
            new = next((i for i, r in enumerate(rows) if r.key == current.key), None)
            if new is None and current.item_id is not None:
                new = next((i for i, r in enumerate(rows) if r.item_id == current.item_id), None)
            if new is None:
                new = _nearest_kept(old_rows, old_index, rows)
        if new is None:
            new = min(old_index, max(len(rows) - 1, 0))
        self.virtual_size = Size(self.size.width, len(rows))
        self._move_to(self._nearest_selectable(new, 1), post=True, force=True)
        self.refresh()

    @property
    def current_row(self) -> Row | None:
        if 0 <= self.cursor < len(self.rows):
            return self.rows[self.cursor]
        return None

    def _index(self) -> dict[str, int]:
        if self._key_index is None:
            self._key_index = {r.key: i for i, r in enumerate(self.rows)}
        return self._key_index

    def index_of_key(self, key: str) -> int | None:
        return self._index().get(key)

    # -- cursor -----------------------------------------------------------------------
    def _nearest_selectable(self, index: int, direction: int) -> int:
        n = len(self.rows)
        if n == 0:
            return 0
        index = max(0, min(index, n - 1))
        i = index
        while 0 <= i < n:
            if self.rows[i].selectable:
                return i
            i += direction
        i = index
        while 0 <= i < n:
            if self.rows[i].selectable:
                return i
            i -= direction
        return index

    def _move_to(self, index: int, *, post: bool = True, force: bool = False) -> None:
        old = self.cursor
        self.cursor = index
        if old != index:
            self.refresh_row(old)
        self.refresh_row(index)
        self.scroll_to_cursor()
        if post and (force or old != index):
            self.post_message(self.Highlighted(self.current_row))

    def move_to(self, index: int) -> None:
        self._move_to(self._nearest_selectable(index, 1))

    def move_to_key(self, key: str) -> bool:
        idx = self._index().get(key)
        if idx is None:
            return False
        self._move_to(idx)
        return True

    def move(self, step: int) -> None:
        n = len(self.rows)
        if n == 0:
            return
        i = self.cursor + step
        direction = 1 if step > 0 else -1
        while 0 <= i < n and not self.rows[i].selectable:
            i += direction
        if 0 <= i < n:
            self._move_to(i)

    def page(self, direction: int) -> None:
        height = max(self.scrollable_content_region.height - 1, 1)
        target = max(0, min(len(self.rows) - 1, self.cursor + direction * height))
        self._move_to(self._nearest_selectable(target, direction))

    def scroll_to_cursor(self) -> None:
        if not self.is_mounted or not self.rows:
            return
        # The first item of a group brings its heading (and a pattern's label) into view with it.
        top = self.cursor
        while top > 0 and not self.rows[top - 1].selectable and self.cursor - top < 2:
            top -= 1
        self.scroll_to_region(
            Region(0, top, 1, self.cursor - top + 1),
            animate=False,
            force=True,
            immediate=True,
            spacing=None,
        )

    def refresh_row(self, index: int) -> None:
        y = index - int(self.scroll_offset.y)
        if 0 <= y < self.size.height:
            self.refresh(Region(0, y, self.size.width, 1))

    def refresh_item(self, item_id: str) -> None:
        """Redraw every visible row showing ``item_id`` (an item can sit in two groups)."""
        top = int(self.scroll_offset.y)
        for idx in range(top, min(top + self.size.height, len(self.rows))):
            if self.rows[idx].item_id == item_id:
                self.refresh_row(idx)

    # -- events -----------------------------------------------------------------------
    def on_click(self, event) -> None:  # textual event
        idx = int(self.scroll_offset.y) + event.y
        if 0 <= idx < len(self.rows) and self.rows[idx].selectable:
            self._move_to(idx)

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self.rows))
        # The list shrinks when the filter bar or the warning bar appears: keep the cursor in view.
        self.call_after_refresh(self.scroll_to_cursor)

    # -- rendering --------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        scroll_y = int(self.scroll_offset.y)
        index = scroll_y + y
        # The scrollbar takes columns of the widget's own: draw within what is left of it.
        width = self.scrollable_content_region.width
        base = self.base_style()
        if not self.rows:
            if y == 0:
                return Strip([Segment(set_cell_size(" " + self.placeholder, width), base)], width)
            return Strip.blank(width, base)
        if index >= len(self.rows):
            return Strip.blank(width, base)
        row = self.rows[index]
        segments = self._row_segments(row, index == self.cursor, width, base)
        strip = Strip(segments)
        return strip.crop_extend(0, width, base)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"item-list--{name}", partial=True)

    def _row_segments(self, row: Row, is_cursor: bool, width: int, base: Style) -> list[Segment]:
        cur = self._style("cursor") if is_cursor else Style()
        if row.kind == "header":
            style = base + self._style("header")
            return [Segment(set_cell_size("▾ " + row.label, width), style)]
        if row.kind == "pattern":
            style = base + self._style("pattern")
            return [Segment(fit("   " + row.label, width), style)]
        pointer = "▶" if is_cursor else " "
        if row.kind == "failure":
            pf = row.failure
            where = pf.where if pf else ""
            text = f"{pointer}  ✗ unparsed   {where} — {pf.message if pf else ''}"
            style = base + self._style("failure") + cur
            return [Segment(fit(one_line(text), width), style)]
        item_id = row.item_id or ""
        view = self.views.get(item_id)
        decisions = self.decisions_source()
        decision_obj = decisions.get(item_id)
        state = decision_state(decision_obj)
        mark = "*" if item_id in self.marked else " "
        line_style = base + cur
        if item_id in self.marked:
            line_style = line_style + self._style("marked")
        lead = f"{pointer}{mark} "
        columns = settings.current().columns
        decision = decision_mark(decision_obj).ljust(DECISION_WIDTH) if "decision" in columns else ""
        cat = CATEGORY_ABBR.get(view.item.category, "??") if view else "??"
        task = view.task if view else ""
        text = view.line_text if view else item_id
        # One task column for every row, as wide as the longest task (up to 3/5 of the row's room
        # beside the decision and category, the text keeping TEXT_ROOM cells), before the text: a
        # task id is never cut by the row's width, and the text, cut last, ends with "…". A task id
        # longer than that keeps its start and its end ("iteration-r1…state-dry"), where the task
        # ids of one feature differ.
        show_cat = "category" in columns
        fixed = len(lead) + len(decision) + (3 if show_cat else 0)
        task_w = self.task_width(width - fixed) if "task" in columns else 0
        fixed += task_w + 1 if task_w else 0
        text_w = max(width - fixed, 4)
        segs = [
            Segment(lead, line_style),
            # On the cursor row the word keeps the row's own colours: a coloured word on the cursor's
            # background can be unreadable (blue on blue), and the word says it anyway.
            Segment(decision, line_style + (Style() if is_cursor else self._style(state))),
            Segment(cat + " " if show_cat else "", line_style + self._style("dim")),
        ]
        if task_w:
            segs.append(Segment(fit_middle(task, task_w) + " ", line_style + self._style("dim")))
        segs.append(Segment(fit(text, text_w), line_style))
        return segs

    def task_width(self, room: int) -> int:
        """The task column's width: the longest task of the items, at most 3/5 of ``room`` (the
        row's cells beside the decision and category) leaving TEXT_ROOM cells to the text, and
        at least TASK_WIDTH cells of it."""
        key = id(self.views)
        if self._task_width[0] != key:
            widest = max((cell_len(t) for t in self.views.tasks()), default=0)  # each task once, no view built
            self._task_width = (key, widest)
        return min(self._task_width[1], max(TASK_WIDTH, min(room * 3 // 5, room - TEXT_ROOM)))


def _nearest_kept(old_rows: list[Row], index: int, rows: list[Row]) -> int | None:
    """The index in ``rows`` of the selectable row of ``old_rows`` nearest to ``old_rows[index]``
    that ``rows`` still hold (the one after it first at equal distance), or None."""
    at = {r.key: i for i, r in enumerate(rows) if r.selectable}
    for d in range(1, len(old_rows)):
        for j in (index + d, index - d):
            if 0 <= j < len(old_rows) and (found := at.get(old_rows[j].key)) is not None:
                return found
        if index + d >= len(old_rows) and index - d < 0:
            break
    return None


def fit_middle(text: str, cells: int) -> str:
    """``text`` in exactly ``cells`` cells: padded, or its start and end kept around a "…"."""
    if cell_len(text) <= cells:
        return set_cell_size(text, cells)
    if cells < 5:
        return fit(text, cells)
    head = cells // 2
    tail = cells - 1 - head
    end = text
    while cell_len(end) > tail:
        end = end[1:]
    return set_cell_size(set_cell_size(text, head) + "…" + end, cells)


def fit(text: str, cells: int) -> str:
    """``text`` in exactly ``cells`` cells: padded, or cut with "…" as its last cell."""
    if cell_len(text) <= cells:
        return set_cell_size(text, cells)
    return set_cell_size(text, max(cells - 1, 0)) + "…"
