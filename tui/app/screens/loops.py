"""The Loops inbox: every loop under the repository, the ones waiting for a person first.

Enter opens the loop: a samsara feature in the triage screen, any other loop in its gate screen
(:class:`~scars.tui.app.screens.loop_gate.LoopGate`), rendered from the same core Evidence as
``scars gate`` and recorded through the same record path; the inbox is read again after an
answer. Which gate answers a loop is core's :func:`scars.core.gates.inbox.gate_call`. Loop texts
are untrusted: every cell is an inert ``Text``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from scars.core import gates
from scars.core.errors import ScarsError
from scars.core.gates.inbox import gate_call
from scars.core.loops import discover_loops
from scars.core.samsara.decisions import resolve_user
from scars.core.sanitize import one_line
from scars.core.text import join_clauses
from scars.tui.app.screens.loop_gate import LoopGate

_BARS = "▁▂▃▄▅▆▇█"


def spark(values: Sequence[float]) -> str:
    if not values:
        return ""
    lo, hi = min(values), max(values)
    if hi == lo:
        return _BARS[3] * len(values)
    return "".join(_BARS[round((v - lo) / (hi - lo) * (len(_BARS) - 1))] for v in values[-12:])


def next_step(state: Any, root: Path) -> str:
    if state.kind == "samsara":
        return "enter: triage this feature"
    call = gate_call(state, root)
    if call is not None:
        return f"enter: answer its {call.gate} gate here (or: {call.command()})"
    return "no human gate of its own: see `scars loops` and `scars advise`"


class LoopsScreen(Screen[None]):
    """Lists LoopState rows; ``enter`` opens a samsara feature for triage, any other loop's gate."""

    BINDINGS = [
        Binding("enter", "open_loop", "Open", id="loops.open"),
        Binding("j,down", "cursor_down", "Down", id="loops.down", show=False),
        Binding("k,up", "cursor_up", "Up", id="loops.up", show=False),
        Binding("q,escape", "leave", "Back / quit", id="loops.quit"),
    ]

    def __init__(self, states: Sequence[Any], root: Path) -> None:
        super().__init__()
        self.states = list(states)
        self.root = Path(root)

    def compose(self) -> ComposeResult:
        yield Static(self._title(), id="loops-title")
        table = DataTable(id="loops-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="loops-detail")
        yield Static(Text("enter open · j/k move · q back"), classes="form-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # "why" before the budget and the trend: on 80 columns it is the column a person reads first,
        # and the detail below repeats it whole.
        table.add_columns("", "kind", "name", "why", "budget", "trend")
        self._fill()
        table.focus()
        self._show(0)

    def _title(self) -> Text:
        waiting = sum(1 for s in self.states if s.waiting_for_human)
        return Text(
            f"Loops inbox — {waiting} of {len(self.states)} waiting for a person ({one_line(str(self.root), 80)})",
            style="bold",
        )

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        for n, s in enumerate(self.states):
            table.add_row(
                Text("WAITING" if s.waiting_for_human else "—", style="bold" if s.waiting_for_human else ""),
                Text(one_line(s.kind, 16)),
                Text(one_line(s.name, 28)),
                Text(one_line(s.reason or "", 60)),
                Text(one_line(s.budget.describe(), 30)),
                Text(spark(s.trend)),
                key=str(n),
            )

    def _show(self, index: int) -> None:
        if not (0 <= index < len(self.states)):
            self.query_one("#loops-detail", Static).update(Text("No loops found."))
            return
        s = self.states[index]
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
        t.append("\n" + one_line(next_step(s, self.root), 200))
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
        index = self.query_one(DataTable).cursor_row
        if not (0 <= index < len(self.states)):
            return
        s = self.states[index]
        if s.kind == "samsara":
            self.app.open_feature(self.root / s.path)
            return
        call = gate_call(s, self.root)
        if call is None:
            self.notify(one_line(next_step(s, self.root), 300), markup=False)
            return
        try:
            evidence = gates.gather(call.gate, call.path, **call.options)
        except ScarsError as exc:
            self.notify(one_line(str(exc), 300), title=call.gate, severity="error", markup=False)
            return
        self.app.push_screen(LoopGate(evidence), callback=lambda res: self._record(call, res))

    def _record(self, call: Any, res: dict | None) -> None:
        """Record the gate's answer through the one record path, then read the inbox again."""
        if res is None:
            return
        options = dict(call.options)
        if res.get("value") is not None:
            options["value"] = res["value"]
        try:
            evidence = gates.gather(call.gate, call.path, **options)
            result = gates.record(
                evidence, res["answer"], res["reason"], user=resolve_user(self.app.driver), source="app"
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
        if self.app.feature_dir is None:
            self.app.exit()
        else:
            self.app.pop_screen()
