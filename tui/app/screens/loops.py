"""The Loops inbox: every loop under the repository, the ones waiting for a person first.

A samsara feature opens in the triage screen (enter); another loop's gate is answered with
``scars gate <gate> PATH``, which the detail line names. Loop texts are untrusted: every
cell is an inert ``Text``.
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

from scars.core.sanitize import one_line
from scars.core.text import join_clauses

# The `scars gate` id answering each loop kind's human gate.
GATE_OF_KIND: dict[str, str] = {
    "samsara": "triage",
    "loop-spec": "spec",
    "aris": "review-continue",
    "mechanist": "review-continue",
    "bkit": "pdca-continue",
    "bkit-sprint": "pdca-continue",
}
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
    gate = GATE_OF_KIND.get(state.kind)
    if gate:
        return f"answer with: scars gate {gate} {root / state.path}"
    return "no human gate of its own: see `scars loops` and `scars advise`"


class LoopsScreen(Screen[None]):
    """Lists LoopState rows; ``enter`` on a samsara feature opens it for triage."""

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
        waiting = sum(1 for s in self.states if s.waiting_for_human)
        yield Static(
            Text(
                f"Loops inbox — {waiting} of {len(self.states)} waiting for a person ({one_line(str(self.root), 80)})",
                style="bold",
            ),
            id="loops-title",
        )
        table = DataTable(id="loops-table", cursor_type="row", zebra_stripes=False)
        yield table
        yield Static("", id="loops-detail")
        yield Static(Text("enter open · j/k move · q back"), classes="form-hint")

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        # "why" before the budget and the trend: on 80 columns it is the column a person reads first,
        # and the detail below repeats it whole.
        table.add_columns("", "kind", "name", "why", "budget", "trend")
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
        table.focus()
        self._show(0)

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
        if s.kind != "samsara":
            self.notify(one_line(next_step(s, self.root), 300), markup=False)
            return
        self.app.open_feature(self.root / s.path)

    def action_leave(self) -> None:
        if self.app.feature_dir is None:
            self.app.exit()
        else:
            self.app.pop_screen()
