"""The Loops inbox: every loop under the repository, the ones waiting for a person first.

Enter opens the loop: a samsara feature in the triage screen, any other loop in its gate screen
(:class:`~scars.tui.app.screens.loop_gate.LoopGate`), rendered from the same core Evidence as
``scars gate`` and recorded through the same record path; the inbox is read again after an
answer. Which gate answers a loop is core's :func:`scars.core.gates.inbox.gate_call`. Loop texts
are untrusted: every cell is an inert ``Text``.

Gate requests (``scars gate … --wait``, :mod:`scars.core.gates.requests`) come first, with who
asks and since when; the inbox polls the repository's ``.scars/requests/`` (one ``scandir`` every
half second, in a worker thread), so a new request appears without a reload, with the terminal
bell and a notification. Enter opens its gate screen from the gate gathered again (with a note
when the loop's files changed since it was posted); the answer is written into the request, with
who answered, and the waiting loop records it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.cells import cell_len
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from scars.core import gates
from scars.core.clock import how_long_ago
from scars.core.errors import ScarsError, read_only_note
from scars.core.gates import requests as rq
from scars.core.gates.inbox import gate_call
from scars.core.loops import discover_loops
from scars.core.samsara.decisions import resolve_user
from scars.core.sanitize import one_line
from scars.core.text import join_clauses, sparkline
from scars.tui.app.backend import app_provenance
from scars.tui.app.screens.loop_gate import LoopGate
from scars.tui.app.typed import scars_app

# The inbox's columns; "why" before the budget and the trend: on 80 columns it is the column a
# person reads first, and the detail below repeats it whole. Its width is what the others leave
# (rows are cut to the width, never scrolled sideways: no part of a column is pushed off screen).
COLUMNS = ("", "kind", "name", "why", "budget", "trend")
WHY = COLUMNS.index("why")
WHY_MIN = 20  # narrower columns give up room for it, then the table scrolls sideways
# The columns that give up room for why, in this order, each down to its floor (an ellipsis cuts).
SHRINK = (("name", 14), ("budget", 12), ("kind", 8))
TREND_POINTS = 12  # the sparkline's last points


# What Enter does on a row when this session records nothing (``read_only``: why), said with THE
# read-only words (``scars.core.errors.read_only_note``) instead of an invitation to answer.
NOT_RECORDED = "look only, its answer is not recorded here"


def next_step(state: Any, root: Path, read_only: str | None = None) -> str:
    if state.kind == "samsara":
        if read_only:
            return f"enter: open this feature — {read_only_note(read_only, 'look only, no decision is recorded here')}"
        return "enter: triage this feature"
    if state.kind == "samsara-fast-track":
        return "a fast-track side route: no rounds, nothing to triage"
    call = gate_call(state, root)
    if call is not None:
        if read_only:
            return f"enter: see its {call.gate} gate — {read_only_note(read_only, NOT_RECORDED)}"
        return f"enter: answer its {call.gate} gate here (or: {call.command()})"
    return "no human gate of its own: see `scars loops` and `scars advise`"


def inbox_stamp(root: Path) -> object:
    """What changes when a request is posted, answered, applied or withdrawn, or a waiter comes
    or goes: the stat of every file of the inbox (one ``scandir``)."""
    out = []
    try:
        with os.scandir(rq.inbox_dir(root)) as it:
            for e in it:
                with contextlib.suppress(OSError):
                    st = e.stat(follow_symlinks=False)
                    out.append((e.name, st.st_ino, st.st_mtime_ns, st.st_size))
    except OSError:
        return None
    return tuple(sorted(out))


def read_requests(root: Path, read_only: str | None = None) -> list:
    """The open requests of the inbox as they stand now (their gates gathered again; ``read_only``:
    from the loops' files as they are)."""
    return rq.open_requests(root, read_only=read_only)[0]


def request_why(view: Any, width: int = 60) -> Text:
    """The "why" cell of a request row: who asks, since when, whether a process waits."""
    r = view.request
    ago = how_long_ago(r.asked_at)
    waits = "waiting" if view.waiter is not None else "nobody waits"
    if r.answer:
        waits = f"answered by {r.answer.get('by', '?')}; " + waits
    return Text(one_line(f"{r.asked_by} asks{f', {ago} ago' if ago else ''}; {waits}", width))


def request_detail(view: Any, read_only: str | None = None) -> Text:
    """The detail pane of a request row (core's lines of it), inert."""
    r = view.request
    t = Text()
    t.append(one_line(f"gate request {r.id}: {r.gate} ({r.loop_label}) — {view.state}", 120), style="bold")
    t.append("\n" + one_line(f"path: {r.path}", 160))
    for line in view.lines(steps=not read_only):
        t.append("\n" + one_line(line, 300))
    if rq.answerable(view.state, shows_gate_now=True):
        said = (
            f"enter: see its gate — {read_only_note(read_only, NOT_RECORDED)}" if read_only else "enter: answer it here"
        )
        t.append("\n" + one_line(said, 200))
    return t


class LoopsScreen(Screen[None]):
    """Lists LoopState rows; ``enter`` opens a samsara feature for triage, any other loop's gate."""

    BINDINGS = [
        Binding("enter", "open_loop", "Open", id="loops.open"),
        Binding("j,down", "cursor_down", "Down", id="loops.down", show=False),
        Binding("k,up", "cursor_up", "Up", id="loops.up", show=False),
        Binding("q,escape", "leave", "Back / quit", id="loops.quit"),
    ]

    POLL_SECONDS = 0.5  # how often the inbox looks for gate requests (a new one shows within this)

    def __init__(self, states: Sequence[Any], root: Path) -> None:
        super().__init__()
        self.states = list(states)
        self.root = Path(root)
        self.requests_root = rq.requests_root(self.root)
        self.requests: list[rq.RequestView] = []  # the open gate requests, listed before the loops
        self._requests_stamp: object = None
        self._announced: set[str] = set()  # request ids already rung for
        self._why_width = 60  # the why column's width, fitted to the table at each fill
        self._filled_width = 0  # the screen width the table was last filled for
        self._why_column: Any = None

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="loops-title")
        table: DataTable[Text] = DataTable(id="loops-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="loops-detail")
        yield Static(Text("enter open · j/k move · q back"), classes="form-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        stamp = inbox_stamp(self.requests_root)
        self._requests_stamp = stamp
        self.requests = read_requests(self.requests_root, self._read_only)
        self._announced = {v.request.id for v in self.requests}
        self.query_one("#loops-title", Static).update(self._title())
        self._fill()
        table.focus()
        self._show(0)
        self.set_interval(self.POLL_SECONDS, self._poll_requests)

    # -- gate requests: polled, listed first ----------------------------------------------
    @work(thread=True, exclusive=True, group="requests")
    def _poll_requests(self) -> None:
        stamp = inbox_stamp(self.requests_root)
        if stamp == self._requests_stamp:
            if self.requests:
                scars_app(self).call_from_thread(self._tick)
            return
        views = read_requests(self.requests_root, self._read_only)
        scars_app(self).call_from_thread(self._requests_read, stamp, views)

    def _tick(self) -> None:
        """The requests' ages go on: their "why" cells say it again."""
        if not self.query(DataTable):  # left meanwhile: the worker's result has nowhere to go
            return
        table = self.query_one(DataTable)
        for v in self.requests:
            with contextlib.suppress(Exception):  # a row being replaced meanwhile
                table.update_cell(f"request:{v.request.id}", self._why_column, request_why(v, self._why_width))

    def _requests_read(self, stamp: object, views: list) -> None:
        if not self.query(DataTable):  # left meanwhile: the worker's result has nowhere to go
            return
        self._requests_stamp = stamp
        closed = {v.request.id for v in self.requests} - {v.request.id for v in views}
        table = self.query_one(DataTable)
        row = table.cursor_row
        current = self._row(row)
        self.requests = views
        self.query_one("#loops-title", Static).update(self._title())
        self._fill()
        keep = self._index_of(current)
        if keep is not None:
            table.move_cursor(row=keep)
        self._show(table.cursor_row)
        if closed:  # answered and recorded (or withdrawn): the loops they stood for read again
            self.reload()
        new = [v for v in views if v.request.id not in self._announced and v.state == "pending"]
        self._announced |= {v.request.id for v in views}
        if new:
            scars_app(self).bell()
            who = ", ".join(one_line(f"{v.request.asked_by} asks {v.request.gate}", 60) for v in new[:3])
            self.notify(
                one_line(f"{len(new)} new gate request{'s' if len(new) > 1 else ''}: {who}", 200),
                title="Gate request",
                markup=False,
            )

    @property
    def _read_only(self) -> str | None:
        """Why this session writes no loop's files and answers no request (None: it may); handed
        into core with every write (core refuses it there: ``refuse_if_read_only``)."""
        return scars_app(self).write_refusal(feature=False)

    def _row(self, index: int) -> Any:
        """The request view or the loop state shown in row ``index`` (None past the end)."""
        if 0 <= index < len(self.requests):
            return self.requests[index]
        index -= len(self.requests)
        return self.states[index] if 0 <= index < len(self.states) else None

    def _index_of(self, row: Any) -> int | None:
        if isinstance(row, rq.RequestView):
            ids = [v.request.id for v in self.requests]
            return ids.index(row.request.id) if row.request.id in ids else None
        for n, s in enumerate(self.states):
            if s is row:
                return len(self.requests) + n
        return None

    def _title(self) -> Text:
        waiting = sum(1 for s in self.states if s.waiting_for_human)
        asks = sum(1 for v in self.requests if rq.answerable(v.state, shows_gate_now=True))
        requests = f"{asks} gate request{'' if asks == 1 else 's'} · " if self.requests else ""
        return Text(
            f"Loops inbox — {requests}{waiting} of {len(self.states)} waiting for a person "
            f"({one_line(str(self.root), 80)})",
            style="bold",
        )

    def _rows(self) -> list[tuple[str, list[Text], str | None]]:
        """(key, the cells but why, the why text — None for a request: request_why) of every row."""
        rows: list[tuple[str, list[Text], str | None]] = []
        for v in self.requests:
            r = v.request
            cells = [
                Text(v.state.upper(), style="bold" if v.state == "pending" else ""),
                Text("request"),
                Text(one_line(f"{r.gate} {Path(r.path).name}", 28)),
                Text(""),
                Text(""),
            ]
            rows.append((f"request:{r.id}", cells, None))
        for n, s in enumerate(self.states):
            cells = [
                Text("WAITING" if s.waiting_for_human else "—", style="bold" if s.waiting_for_human else ""),
                Text(one_line(s.kind, 16)),
                Text(one_line(s.name, 28)),
                Text(one_line(s.budget.describe(), 30)),
                Text(sparkline(s.trend, TREND_POINTS)),
            ]
            rows.append((str(n), cells, s.reason or ""))
        return rows

    def _widths(self, rows: list[tuple[str, list[Text], str | None]], width: int) -> list[int]:
        """Each column's width: its widest cell or label; why gets what the others leave of the
        table's width (less each column's padding and the vertical scrollbar), and where that is
        under WHY_MIN the SHRINK columns give up room first."""
        others = [label for n, label in enumerate(COLUMNS) if n != WHY]
        widths = [max([cell_len(label)] + [r[1][n].cell_len for r in rows]) for n, label in enumerate(others)]
        padding = 2 * len(COLUMNS)  # DataTable's cell padding, one column each side
        why = width - sum(widths) - padding - 2
        for label, floor in SHRINK:
            n = others.index(label)
            give = max(0, min(widths[n] - floor, WHY_MIN - why))
            widths[n] -= give
            why += give
        return widths[:WHY] + [max(WHY_MIN, why)] + widths[WHY:]

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        rows = self._rows()
        self._filled_width = self.size.width or scars_app(self).size.width
        widths = self._widths(rows, self._filled_width)
        self._why_width = widths[WHY]
        table.clear(columns=True)
        keys = [table.add_column(label, width=w) for label, w in zip(COLUMNS, widths, strict=True)]
        self._why_column = keys[WHY]
        views = {f"request:{v.request.id}": v for v in self.requests}
        fitted = widths[:WHY] + widths[WHY + 1 :]
        for key, cells, why in rows:
            for cell, w in zip(cells, fitted, strict=True):
                cell.truncate(w, overflow="ellipsis")
            text = request_why(views[key], self._why_width) if why is None else Text(one_line(why, self._why_width))
            table.add_row(*cells[:WHY], text, *cells[WHY:], key=key)

    def on_resize(self) -> None:
        """A new width gives the why column what the others leave (the cursor stays on its row)."""
        if not self.query(DataTable) or self.size.width == self._filled_width:
            return  # (the first size, at mount: filled for it already)
        table = self.query_one(DataTable)
        row = table.cursor_row
        self._fill()
        if row:
            table.move_cursor(row=row)

    def _show(self, index: int) -> None:
        row = self._row(index)
        if row is None:
            self.query_one("#loops-detail", Static).update(Text("No loops found."))
            return
        if isinstance(row, rq.RequestView):
            self.query_one("#loops-detail", Static).update(request_detail(row, self._read_only))
            return
        s = row
        t = Text()
        t.append(one_line(f"{s.kind} {s.name}", 120), style="bold")
        t.append("\n" + one_line(f"path: {s.path}", 160))
        if s.reason:
            t.append("\n" + one_line(f"why: {s.reason}", 300))
        rule = s.stop_rule
        met = {True: "met", False: "not met", None: "cannot be evaluated"}[rule.met]
        t.append(
            "\n" + one_line(f"stop rule: {met}" + (f" — {join_clauses(rule.reasons)}" if rule.reasons else ""), 200)
        )
        if s.parse_failures:
            t.append(
                "\n"
                + one_line(
                    f"parse failures: {len(s.parse_failures)} ({s.parse_failures[0].file}: "
                    f"{s.parse_failures[0].message})",
                    200,
                )
            )
        t.append("\n" + one_line(next_step(s, self.root, self._read_only), 200))
        self.query_one("#loops-detail", Static).update(t)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_loop()

    def action_cursor_down(self) -> None:
        self.query_one(DataTable).action_cursor_down()

    def action_cursor_up(self) -> None:
        self.query_one(DataTable).action_cursor_up()

    def action_open_loop(self) -> None:
        s = self._row(self.query_one(DataTable).cursor_row)
        if s is None:
            return
        if isinstance(s, rq.RequestView):
            self._open_request(s.request.id)
            return
        if s.kind == "samsara":
            scars_app(self).open_feature(self.root / s.path)
            return
        call = gate_call(s, self.root)
        if call is None:
            self.notify(one_line(next_step(s, self.root, self._read_only), 300), markup=False)
            return
        try:
            evidence = gates.gather(call.gate, call.path, read_only=self._read_only, **call.options)
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title=call.gate, severity="error", markup=False)
            return
        asked = rq.pending_for(self.requests_root, evidence, self.requests)
        if asked is not None:
            # A process waits on this very gate: answer its request, so that it wakes and goes on.
            doing = "showing" if self._read_only else "answering"
            self.notify(
                one_line(f"{asked.request.asked_by} waits on this gate: {doing} its request {asked.request.id}", 200),
                markup=False,
            )
            self._open_request(asked.request.id)
            return
        scars_app(self).push_screen(
            LoopGate(evidence, read_only=self._read_only), callback=lambda res: self._record(call, res)
        )

    def _record(self, call: Any, res: dict | None) -> None:
        """Record the gate's answer through the one record path, then read the inbox again."""
        if res is None:
            return
        options = dict(call.options)
        if res.get("value") is not None:
            options["value"] = res["value"]
        try:
            evidence = gates.gather(call.gate, call.path, read_only=self._read_only, **options)
            result = gates.record(
                evidence,
                res["answer"],
                res["reason"],
                user=resolve_user(scars_app(self).driver),
                source=app_provenance(),
                read_only=self._read_only,
            )
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title=call.gate, severity="error", markup=False)
            return
        self.notify(
            one_line(f"{call.gate}: {result.answer} → {result.decision}; recorded: {', '.join(result.recorded)}", 300),
            title="Recorded",
            markup=False,
        )
        self.reload()

    def _open_request(self, rid: str) -> None:
        """The request's gate screen, from the gate gathered again now (a note when it moved on)."""
        try:
            view = rq.inspect_request(
                self.requests_root, rq.load_request(self.requests_root, rid), read_only=self._read_only
            )
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title=rid, severity="error", markup=False)
            return
        r = view.request
        if not rq.answerable(view.state, shows_gate_now=True):
            self.notify(one_line(f"request {rid} is {view.state}: " + r.answered_text(), 300), markup=False)
            return
        if view.evidence is None:
            self.notify(
                one_line(f"request {rid}: the loop cannot be read now: {view.problem}", 300),
                title=rid,
                severity="error",
                markup=False,
            )
            return
        if r.gate == "triage" and not self._holds(r):
            # Triage is answered item by item: open the feature; back here, Enter sends "triage done".
            scars_app(self).open_feature(r.loop_path(self.requests_root))
            if self._read_only:
                self.notify(one_line(read_only_note(self._read_only, NOT_RECORDED), 300), title=rid, markup=False)
                return
            self.notify(
                one_line(
                    f"Triage the items, then L (Loops inbox) and Enter on request {rid}: it records the triage "
                    "gate and the waiting loop goes on.",
                    300,
                ),
                title=rid,
                markup=False,
            )
            return
        ago = how_long_ago(r.asked_at)
        asked = f"request {r.id}: {r.asked_by} asks{f' ({ago} ago)' if ago else ''} — {r.path}"
        note = None
        if view.changed:
            note = (
                f"The loop's files changed since this request was posted ({', '.join(view.changed)}): "
                "the gate below is read again from them" + ("." if self._read_only else "; your answer applies to it.")
            )
        scars_app(self).push_screen(
            LoopGate(view.evidence, asked=asked, note=note, read_only=self._read_only),
            callback=lambda res: self._answer_request(view, res),
        )

    def _answer_request(self, view: Any, res: dict | None) -> None:
        """Write the answer into the request (the waiting loop records it), with who answered."""
        if res is None:
            return
        rid = view.request.id
        try:
            req = rq.answer_request(
                self.requests_root,
                rid,
                res["answer"],
                res["reason"],
                user=resolve_user(scars_app(self).driver),
                source=app_provenance("request-app", "app"),
                value=res.get("value"),
                shown=view.fingerprint,
                read_only=self._read_only,
            )
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title=rid, severity="error", markup=False)
            return
        waiter = rq.waiter_of(self.requests_root, rid)
        then = (
            "the waiting loop records it and goes on"
            if waiter is not None
            else f"nobody waits for it now: `scars requests apply {rid}` records it"
        )
        if self._holds(req):
            # This app holds the feature's writer lock: it records the answer through its own
            # session (the waiter could not take the lock) and the waiter prints what was recorded.
            try:
                result = rq.apply_request(
                    self.requests_root, rid, session=scars_app(self).loaded_backend.session, read_only=self._read_only
                )
            except ScarsError as exc:
                self.notify(one_line(str(exc), 300), title=rid, severity="error", markup=False)
                return
            then = f"recorded ({', '.join(result.recorded) or 'nothing'}); the waiting loop goes on"
            scars_app(self).reload(why="request")
        self.notify(
            one_line(f"{rid}: {(req.answer or {}).get('answer')} — {then}", 300), title="Answered", markup=False
        )
        self._requests_stamp = None  # read the inbox again at the next poll
        self._poll_requests()

    def _holds(self, req: Any) -> bool:
        """True when this app has the request's samsara feature open for writing."""
        backend = getattr(scars_app(self), "backend", None)
        session = getattr(backend, "session", None)
        if req.loop != "samsara" or session is None or getattr(backend, "read_only", False):
            return False
        return Path(session.path).resolve() == req.loop_path(self.requests_root).resolve()

    def reload(self) -> None:
        """Read every loop under the root again (after an answer) and redraw the inbox."""
        try:
            self.states = list(discover_loops(self.root))
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), severity="error", markup=False)
            return
        self.query_one("#loops-title", Static).update(self._title())
        self._fill()
        self._show(self.query_one(DataTable).cursor_row)

    def action_leave(self) -> None:
        if scars_app(self).feature_dir is None:
            scars_app(self).exit()
        else:
            scars_app(self).pop_screen()
