"""The main triage screen: header, warning bar, grouped item list, detail pane, filter.

Every key is a ``Binding`` with an id (``scars.*``), so ``keymap.toml`` can rebind it and
the command palette lists it. Decisions go through ``app.backend`` (the durable layer):
what the screen shows as decided is on disk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widget import AwaitMount
from textual.widgets import Input, Static
from textual.worker import get_current_worker

from scars.core.errors import ChangedOnDisk, IterationStopped, ScarsError
from scars.core.samsara.locate import parse_location, resolve_in_repo
from scars.core.sanitize import one_line
from scars.tui.app.typed import scars_app
from scars.tui.app.viewmodel import FILTER_KEYS, FILTER_STATES, FilterError, Row, decision_state, parse_filter
from scars.tui.app.widgets.detail import DetailPane
from scars.tui.app.widgets.header import ScarsHeader
from scars.tui.app.widgets.item_list import ItemList
from scars.tui.app.widgets.key_hints import KeyHints
from scars.tui.app.widgets.warning_bar import WarningBar

MAIN_BINDINGS: list[Binding] = [
    Binding("j,down", "cursor_down", "Down", id="scars.down", show=False),
    Binding("k,up", "cursor_up", "Up", id="scars.up", show=False),
    Binding("pagedown", "page_down", "Page down", id="scars.page_down", show=False),
    Binding("pageup", "page_up", "Page up", id="scars.page_up", show=False),
    Binding("home", "first", "First item", id="scars.first", show=False),
    Binding("end", "last", "Last item", id="scars.last", show=False),
    Binding("J", "detail_scroll(1)", "Scroll the detail down", id="scars.detail_down", show=False),
    Binding("K", "detail_scroll(-1)", "Scroll the detail up", id="scars.detail_up", show=False),
    Binding("z", "zoom", "Zoom: the detail on the whole screen, or back", id="scars.zoom", show=False),
    Binding("n", "next_undecided", "Next undecided item", id="scars.next_undecided"),
    Binding("f", "fix", "Fix", id="scars.fix"),
    Binding("a", "accept", "Accept (re-review signal, owner, rationale, watch)", id="scars.accept"),
    Binding("d", "defer", "Defer (reason, revisit when)", id="scars.defer"),
    Binding("u", "undo", "Undo the last decision or batch", id="scars.undo"),
    Binding("U", "undo_item", "Undo this item's decision (any earlier one)", id="scars.undo_item", show=False),
    Binding("right_square_bracket", "same_task(1)", "Next item of this task", id="scars.next_same_task", show=False),
    Binding(
        "left_square_bracket", "same_task(-1)", "Previous item of this task", id="scars.prev_same_task", show=False
    ),
    Binding("y", "copy_id", "Copy the item id", id="scars.copy_id", show=False),
    Binding("e", "edit", "Open the item's location in $EDITOR", id="scars.edit", show=False),
    # A priority key (taken before the focused list sees it, in the order keys came): keys typed
    # at once after it are the filter's (check_action lets it through to a focused text field).
    Binding("slash", "filter", "Filter: words, cat:, task:, file:, state:", id="scars.filter", priority=True),
    Binding("escape", "clear_filter", "Clear the filter", id="scars.clear_filter", show=False),
    Binding("space", "mark", "Mark the item (for F A D)", id="scars.mark"),
    Binding("ctrl+p", "app.command_palette", "Command palette: every action by name", id="scars.palette", show=False),
    Binding("F", "bulk('fix')", "Fix every marked item", id="scars.bulk_fix", show=False),
    Binding("A", "bulk('accept')", "Accept every marked item", id="scars.bulk_accept", show=False),
    Binding("D", "bulk('defer')", "Defer every marked item", id="scars.bulk_defer", show=False),
    Binding("t", "trends", "Trends: signal_lost and decisions per round", id="scars.trends"),
    Binding("g", "gate", "Round gate: continue / stop, blocked fixes", id="scars.gate"),
    Binding("p", "swap_driver", "Swap the pair's driver", id="scars.swap_driver", show=False),
    Binding("s", "sign_off", "Sign off a pending accept", id="scars.sign_off", show=False),
    Binding("r", "reload", "Reload from disk", id="scars.reload", show=False),
    Binding("L", "loops", "Loops inbox", id="scars.loops", show=False),
    Binding("question_mark", "help", "Help: every key with its binding id", id="scars.help"),
    Binding("q", "quit", "Quit", id="scars.quit"),
]

# Fits 80 columns; `?` lists every filter key (file:PART, state:decided, marked).
NO_ITEMS = "No scar items in this feature."
PATTERNS_PENDING = "The possible patterns are still being computed: decide once they are listed."


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[Binding | tuple[str, str] | tuple[str, str, str]]] = [*MAIN_BINDINGS]
    # The actions that write (a decision, an undo, a sign-off, the round gate): in a session that
    # cannot write they are not offered (key hints, help, palette) and a key says why.
    WRITE_ACTIONS = frozenset({"fix", "accept", "defer", "undo", "undo_item", "bulk", "gate", "sign_off"})
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (100, "-wide")]
    _filter_error: str | None = None  # the message of a filter being typed that does not parse

    def compose(self) -> ComposeResult:
        yield ScarsHeader(id="header")
        yield WarningBar("", id="warnings")
        with Horizontal(id="body"):
            yield ItemList(id="items")
            yield DetailPane(id="detail")
        yield Vertical(id="filter-bar")  # its field is mounted after the first frame (_filter_field)
        yield KeyHints(MAIN_BINDINGS, id="key-hints")

    def on_mount(self) -> None:
        self.query_one("#filter-bar").display = False
        # The filter's field (an Input: its stylesheet parsed, its styles applied) is not in the
        # first frame, which never shows it: mounted right after it, or by `/` if that comes first.
        self.call_after_refresh(self._filter_field)
        self.query_one(ItemList).focus()
        self.query_one(DetailPane).show_nothing("Loading…")
        scars_app(self).show_first()  # a feature opened before the app ran: in the first frame

    # -- helpers ----------------------------------------------------------------------
    @property
    def items(self) -> ItemList:
        return self.query_one(ItemList)

    def current(self) -> Row | None:
        return self.items.current_row

    def current_item_id(self) -> str | None:
        row = self.current()
        return row.item_id if row is not None and row.kind == "item" else None

    def refresh_all(self, *, rebuild: bool = False, detail: bool = True, valves: bool = True) -> None:
        """Redraw header, warnings, list and detail from the app's state (``detail=False``: the
        caller's ``set_rows`` posted the ``Highlighted`` that shows it, after the list is drawn;
        ``valves=False``: ``app.valves`` are those of the decisions shown, as the load's are)."""
        app = scars_app(self)
        if app.state is None:
            return
        if rebuild:
            self.items.set_rows(app.build_rows())
        if valves:
            app.refresh_valves()
        self.query_one(ScarsHeader).show(
            app.loaded_feature,
            round_no=app.round_no,
            progress=app.loaded_state.progress(app.decisions),
            driver=app.driver_label(),
            read_only=app.loaded_backend.read_only_reason if app.loaded_backend.read_only else None,
            stopped=app.loaded_backend.stopped(),
            round_open=app.loaded_backend.session is not None
            and app.loaded_backend.session.current_round() is not None,
        )
        self.query_one(WarningBar).show(app.loaded_feature, app.valves, app.loaded_backend.moved)
        self.query_one(KeyHints).refresh_hints()  # a session found read-only on load offers no writes
        self.items.refresh()
        if detail:
            self.show_detail(self.current())

    def show_detail(self, row: Row | None) -> None:
        app = scars_app(self)
        pane = self.query_one(DetailPane)
        if app.state is None:
            return
        if row is None:
            pane.show_nothing("No items." if not app.loaded_state.order else "No item matches the filter.")
            return
        if row.kind == "failure" and row.failure is not None:
            pane.show_failure(row.failure)
            return
        if row.item_id is None:
            pane.show_nothing()
            return
        view = app.loaded_state.views[row.item_id]
        decision = app.decisions.get(row.item_id)
        excerpt = app.excerpts.get(view.item) if app.excerpts is not None else None
        if excerpt is None:
            app.read_excerpts()  # the rows around the cursor, in a worker: shown when read
        pane.show_item(
            app.loaded_feature,
            view.item,
            decision,
            app.loaded_backend.history(row.item_id),
            reopened=app.loaded_backend.reopened().get(row.item_id) if decision is None else None,
            group=row.group,
            tasks=app.loaded_state.tasks_of(view.item),
            stopped=app.loaded_backend.stopped() if app.write_refusal() is None else None,
            excerpt=excerpt,
        )

    def offers(self, action: str) -> bool:
        """False for a write action (:attr:`WRITE_ACTIONS`) when this session cannot write."""
        return action.split("(")[0] not in self.WRITE_ACTIONS or scars_app(self).write_refusal() is None

    @on(ItemList.Highlighted)
    def _highlighted(self, event: ItemList.Highlighted) -> None:
        self.show_detail(event.row)

    def _refuse_if_read_only(self) -> bool:
        if scars_app(self).refuse_if_read_only("this decision is not recorded"):
            return True
        if scars_app(self).patterns_pending:
            # A round's first decision reads the feature again: with the read still on, that would
            # compute the possible patterns a second time, holding the screen.
            self.notify(PATTERNS_PENDING, title="Not recorded yet", severity="warning", markup=False)
            return True
        return False

    def _after_decision(self, item_ids: list[str], *, advance: bool) -> None:
        app = scars_app(self)
        needs_rebuild = app.filter is not None and bool(app.filter.states)
        if needs_rebuild:
            self.items.set_rows(app.build_rows())
        else:
            for i in item_ids:
                self.items.refresh_item(i)
        if advance:
            self.items.move(1)
        self.refresh_all()

    def _record(self, fn, *args, then: Callable[[Any], None] | None = None, **kwargs) -> Any:
        """Run a backend write; show a refusal or a conflict as a message, never crash.
        ``then(result)`` draws what it recorded: at once, or after the max-rounds override."""
        try:
            result = fn(*args, **kwargs)
        except ChangedOnDisk as exc:
            self.notify(
                one_line(str(exc), 300) + " — reloading.", title="Changed on disk", severity="error", markup=False
            )
            self.action_reload()
            return None
        except ScarsError as exc:
            # What the retry records is drawn as the same write recorded at once is (``then``).
            def retry() -> None:
                self._record(fn, *args, then=then, **kwargs)

            if isinstance(exc, IterationStopped):
                # After a stop, iterating again is the person's explicit act: asked, then retried.
                scars_app(self).ask_round_start((exc.round, exc.decision), then=retry)
                return None
            # The max-rounds valve: said, and overridden only with a reason the person gives.
            if not scars_app(self).ask_round_override(exc, retry=retry):
                self.notify(one_line(str(exc), 300), title="Not recorded", severity="error", markup=False)
            return None
        if then is not None:
            then(result)
        return result

    # -- cursor -----------------------------------------------------------------------
    def action_cursor_down(self) -> None:
        self.items.move(1)

    def action_cursor_up(self) -> None:
        self.items.move(-1)

    def action_page_down(self) -> None:
        self.items.page(1)

    def action_page_up(self) -> None:
        self.items.page(-1)

    def action_detail_scroll(self, direction: int) -> None:
        """J / K: scroll the detail pane a few lines without moving the focus from the list."""
        pane = self.query_one(DetailPane)
        step = max(pane.scrollable_content_region.height // 2, 1)
        pane.scroll_relative(y=direction * step, animate=False, immediate=True)

    def action_zoom(self) -> None:
        """z: the detail pane takes the list's room too (the cursor keys still move through the
        items, the detail follows); z again brings the list back."""
        self.toggle_class("-zoom")
        zoomed = self.has_class("-zoom")
        items = self.query_one(ItemList)
        items.display = not zoomed
        self.query_one(DetailPane).set_class(zoomed, "-zoomed")
        if not zoomed:
            # Hiding the list moved the focus to the detail: back to the list, or the arrows would
            # scroll the detail while f / a / d act on the list's row.
            items.focus()

    def action_first(self) -> None:
        self.items.move_to(0)

    def action_last(self) -> None:
        self.items._move_to(self.items._nearest_selectable(len(self.items.rows) - 1, -1))

    def action_next_undecided(self) -> None:
        app = scars_app(self)
        if app.state is None:
            return
        idx = app.loaded_state.first_undecided(self.items.rows, app.decisions, self.items.cursor + 1)
        if idx is None:
            self.notify("Every listed item is decided.", markup=False)
            return
        self.items.move_to(idx)

    # -- decisions --------------------------------------------------------------------
    def action_fix(self) -> None:
        item_id = self.current_item_id()
        if item_id is None or self._refuse_if_read_only():
            return
        self._save("fix", [item_id], {})

    def action_accept(self) -> None:
        item_id = self.current_item_id()
        if item_id is None or self._refuse_if_read_only():
            return
        scars_app(self).open_accept_form([item_id], callback=lambda fields: self._save("accept", [item_id], fields))

    def action_defer(self) -> None:
        item_id = self.current_item_id()
        if item_id is None or self._refuse_if_read_only():
            return
        scars_app(self).open_defer_form([item_id], callback=lambda fields: self._save("defer", [item_id], fields))

    def _save(self, action: str, item_ids: list[str], fields: dict | None) -> None:
        """Record ``action`` on one item, or on a marked batch (one undo reverts the batch)."""
        if fields is None:  # the form was cancelled
            return
        app = scars_app(self)
        fields = {k: v for k, v in fields.items() if v is not None}
        if action == "accept" and app.require_second_accept:
            fields["pending_review"] = True

        def done(_result: Any) -> None:
            if len(item_ids) > 1:
                app.marked.difference_update(item_ids)
            self._after_decision(item_ids, advance=len(item_ids) == 1)

        if len(item_ids) == 1:
            self._record(app.loaded_backend.decide, item_ids[0], action, decided_by=app.driver, then=done, **fields)
        else:
            self._record(app.loaded_backend.decide_many, item_ids, action, decided_by=app.driver, then=done, **fields)

    def action_undo(self) -> None:
        if self._refuse_if_read_only():
            return
        before = dict(scars_app(self).decisions)
        reverted = self._record(scars_app(self).loaded_backend.undo, decided_by=scars_app(self).driver)
        if reverted is None:
            return
        if not reverted:
            self.notify("Nothing to undo.", markup=False)
            return
        self.notify(undo_message(list(reverted), before, scars_app(self).state), title="Undone", markup=False)
        self._after_decision(list(reverted), advance=False)
        first = reverted[0]
        for idx, row in enumerate(self.items.rows):
            if row.item_id == first:
                self.items.move_to(idx)
                break

    def action_undo_item(self) -> None:
        """U: take back the decision of the item under the cursor, whenever in this round it was made."""
        item_id = self.current_item_id()
        if item_id is None or self._refuse_if_read_only():
            return
        before = dict(scars_app(self).decisions)
        reverted = self._record(scars_app(self).loaded_backend.undo_item, item_id, decided_by=scars_app(self).driver)
        if reverted is None:
            return
        if not reverted:
            self.notify(one_line(f"{item_id} has no decision of this round to undo.", 200), markup=False)
            return
        self.notify(undo_message(list(reverted), before, scars_app(self).state), title="Undone", markup=False)
        self._after_decision(list(reverted), advance=False)

    def action_same_task(self, direction: int) -> None:
        """] / [: the next (previous) item of the same task, wrapping."""
        app = scars_app(self)
        item_id = self.current_item_id()
        if item_id is None or app.state is None:
            return
        task = app.loaded_state.views[item_id].item.task_id
        rows = self.items.rows
        n = len(rows)
        for k in range(1, n):
            idx = (self.items.cursor + direction * k) % n
            row = rows[idx]
            if (
                row.kind == "item"
                and row.item_id is not None
                and row.item_id != item_id
                and app.loaded_state.views[row.item_id].item.task_id == task
            ):
                self.items.move_to(idx)
                return
        self.notify(one_line(f"No other item of {task or 'this task'} is listed.", 200), markup=False)

    def action_copy_id(self) -> None:
        """y: the item id to the clipboard (OSC 52: the terminal must allow it; the id is shown too)."""
        item_id = self.current_item_id()
        if item_id is None:
            return
        scars_app(self).copy_to_clipboard(item_id)
        self.notify(f"Copied {item_id}", title="Clipboard", markup=False)

    def action_edit(self) -> None:
        """e: the item's location (its `where`, else its line in the scar report) in $VISUAL / $EDITOR."""
        item_id = self.current_item_id()
        app = scars_app(self)
        if item_id is None or app.feature is None:
            return
        target = edit_target(app.loaded_feature, app.loaded_state.views[item_id].item)
        if isinstance(target, str):
            self.notify(one_line(target, 300), title="Not opened", severity="warning", markup=False)
            return
        app.open_in_editor(*target)

    def action_mark(self) -> None:
        item_id = self.current_item_id()
        if item_id is None:
            return
        marked = scars_app(self).marked
        if item_id in marked:
            marked.discard(item_id)
        else:
            marked.add(item_id)
        self.items.refresh_item(item_id)
        self.items.move(1)

    def action_bulk(self, action: str) -> None:
        app = scars_app(self)
        if self._refuse_if_read_only():
            return
        ids = [i for i in app.loaded_state.order if i in app.marked] if app.state else []
        if not ids:
            self.notify("Mark items with space first; F/A/D then decide all marked items.", markup=False)
            return
        lines = [f"{i}  {app.loaded_state.views[i].line_text}" for i in ids]

        def confirmed(ok: bool | None) -> None:
            if not ok:
                return
            if action == "fix":
                self._save("fix", ids, {})
            elif action == "accept":
                app.open_accept_form(ids, callback=lambda fields: self._save("accept", ids, fields))
            else:
                app.open_defer_form(ids, callback=lambda fields: self._save("defer", ids, fields))

        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.confirm import ConfirmBulk

        app.push_screen(ConfirmBulk(action, lines), callback=confirmed)

    def action_sign_off(self) -> None:
        app = scars_app(self)
        item_id = self.current_item_id()
        if item_id is None or self._refuse_if_read_only():
            return
        d = app.decisions.get(item_id)
        if decision_state(d) != "pending":
            self.notify("Only an accept waiting for a second person can be signed off.", markup=False)
            return
        reviewer = app.driver
        if reviewer and d is not None and reviewer == d.decided_by:
            self.notify(
                one_line(f"{reviewer} made this accept; the other person signs off (p swaps the driver).", 200),
                severity="warning",
                markup=False,
            )
            return
        if self._record(app.loaded_backend.sign_off, item_id, reviewer) is not None:
            self._after_decision([item_id], advance=True)

    def action_swap_driver(self) -> None:
        app = scars_app(self)
        if not app.pair:
            self.notify("Not pairing: start with --pair NAME1,NAME2.", markup=False)
            return
        app.driver_index = 1 - app.driver_index
        self.notify(one_line(f"Driver: {app.driver}", 80), markup=False)
        self.refresh_all()

    # -- filter -----------------------------------------------------------------------
    def _filter_field(self) -> AwaitMount | None:
        """Mount the filter bar's field and state line once (None: mounted already, or the bar is
        not attached: the screen closed before it was drawn)."""
        bar = self.query_one("#filter-bar")
        if bar.children or not bar.is_attached:
            return None
        return bar.mount(
            Input(placeholder=FILTER_KEYS, id="filter", compact=True), Static(FILTER_STATES, id="filter-status")
        )

    def _filter_input(self) -> Input | None:
        found = self.query("#filter")
        return found.first(Input) if found else None

    def _filter_status(self, text: Text | str) -> None:
        found = self.query("#filter-status")
        if found:
            found.first(Static).update(text)

    async def action_filter(self) -> None:
        mounting = self._filter_field()
        if mounting is not None:  # `/` before the field was mounted: the keys after it wait for it
            await mounting
        field = self._filter_input()
        if field is None:  # the screen closes
            return
        self.query_one("#filter-bar").display = True
        # Focused now, not after the keys already queued (Widget.focus defers itself): keys that
        # arrive in one burst after `/` (a paste, a fast typist) are the filter's, not commands.
        self.set_focus(field)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # `/` typed in a text field (the filter's own `file:src/x`) is that field's character.
        return not (action == "filter" and isinstance(self.focused, Input))

    @on(Input.Changed, "#filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self.apply_filter(event.value)

    def apply_filter(self, text: str) -> None:
        app = scars_app(self)
        try:
            flt = parse_filter(text)
        except FilterError as exc:
            # The rows of the last filter that parsed stay; a result of it still on its way must not
            # replace this message (it said "0 item row(s) match" under "cat:xx").
            self._filter_error = "✗ " + one_line(str(exc), 200)
            self.workers.cancel_group(self, "filter")
            self._filter_status(Text(self._filter_error))
            self.items.placeholder = self._filter_error
            self.items.refresh()
            return
        self._filter_error = None
        app.filter = flt if flt.active else None
        if app.state is None:
            return
        self._filter_rows(app.filter)

    def refilter(self) -> None:
        """The rows built again for the filter in force, off the event loop (the app's state is
        new: the possible patterns arrived)."""
        if scars_app(self).state is not None:
            self._filter_rows(scars_app(self).filter)

    @work(thread=True, exclusive=True, group="filter")
    def _filter_rows(self, flt) -> None:
        """Build the filtered rows off the event loop; a newer keystroke supersedes this one."""
        app = scars_app(self)
        worker = get_current_worker()
        rows = app.loaded_state.rows(flt, app.decisions, app.marked, cancelled=lambda: worker.is_cancelled)
        if worker.is_cancelled:  # its rows may be incomplete, and they are stale
            return
        app.call_from_thread(self._show_filtered, flt, rows)

    def _show_filtered(self, flt, rows: list[Row]) -> None:
        if flt is not scars_app(self).filter:  # superseded meanwhile
            return
        if self._filter_error is not None:
            # A filter being typed does not parse: the rows of the last one that did (built again
            # when the possible patterns arrive) stay listed, under the error it shows.
            self.items.set_rows(rows)
            return
        self.items.placeholder = (
            one_line(f"No item matches the filter “{flt.source}” (esc clears it).", 200)
            if flt is not None
            else NO_ITEMS
        )
        self.items.set_rows(rows)
        shown = sum(1 for r in rows if r.kind == "item")
        self._filter_status(Text(f"{shown} item row(s) match" if flt is not None else FILTER_STATES))

    @on(Input.Submitted, "#filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if not event.value.strip():
            self.query_one("#filter-bar").display = False
        self.items.focus()

    def action_clear_filter(self) -> None:
        field = self._filter_input()
        if (field is not None and field.has_focus) or scars_app(self).filter is not None:
            if field is not None:
                field.value = ""
            self.apply_filter("")
            self.query_one("#filter-bar").display = False
        self.items.focus()

    # -- other screens ----------------------------------------------------------------
    def action_trends(self) -> None:

        if scars_app(self).feature is not None:
            # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
            from scars.tui.app.screens.trends import TrendsScreen

            scars_app(self).push_screen(TrendsScreen(scars_app(self).loaded_feature, scars_app(self).decisions))

    def action_gate(self) -> None:
        scars_app(self).open_gate()

    def action_help(self) -> None:

        note = scars_app(self).keymap_note()
        refusal = scars_app(self).write_refusal()
        if refusal is not None:  # what cannot be done is not offered, and why is said
            note = f"{refusal}: nothing is recorded here, so decisions, undo, sign-off and the round gate are not listed.\n{note}".strip()
        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.tui.app.screens.help import HelpScreen

        scars_app(self).push_screen(HelpScreen([b for b in MAIN_BINDINGS if self.offers(b.action)], note))

    def action_loops(self) -> None:
        """The Loops inbox of the repository this feature belongs to."""
        app = scars_app(self)
        root = app.feature.repo_root if app.feature is not None else None
        if not root:
            self.notify("No repository root: the Loops inbox needs a directory holding changes/.", markup=False)
            return

        # lazy: the screens a key opens load when first opened, not before the first paint (issue 31)
        from scars.core.loops import discover_loops
        from scars.tui.app.screens.loops import LoopsScreen

        app.push_screen(LoopsScreen(discover_loops(root), Path(root)))

    def action_reload(self) -> None:
        scars_app(self).reload()

    def action_quit(self) -> None:
        scars_app(self).exit()


def edit_target(feature: Any, item: Any) -> tuple[Path, int | None] | str:
    """(file, line) to open for an item: its ``where`` when that is a file inside the repository,
    else the scar report at the item's line; or why there is nothing to open."""
    loc = parse_location(item.where) if item.where else None
    if loc is not None and loc.path is not None:
        real, _ = resolve_in_repo(feature.repo_root, loc.path)
        if real is not None and real.is_file():
            return real, loc.start
    report = Path(feature.path) / item.file
    if report.is_file():
        return report, item.line
    return f"{item.id}: no file to open (its location is outside the repository and its report is gone)"


def undo_message(reverted: list[str], before: dict, state: Any) -> str:
    """What an undo took back: the action and the item (or how many items of a batch)."""
    actions = sorted({before[i].action for i in reverted if i in before}) or ["decision"]
    what = "/".join(actions)

    def name(i: str) -> str:
        view = state.views.get(i) if state is not None else None
        return f"{i} “{one_line(view.line_text, 50)}”" if view is not None else i

    if len(reverted) == 1:
        return f"Undid {what} of {name(reverted[0])}."
    shown = ", ".join(reverted[:3]) + (f" +{len(reverted) - 3} more" if len(reverted) > 3 else "")
    return f"Undid {what} of {len(reverted)} items (one batch): {shown}."
