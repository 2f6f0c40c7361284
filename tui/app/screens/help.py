"""`?`: every key of the main screen, with its binding id (for keymap.toml)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.viewmodel import FILTER_KEYS, FILTER_STATES


def bindings_table(app, bindings) -> Table:  # textual objects
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
    table.add_column("key")
    table.add_column("action")
    table.add_column("binding id")
    keymap = getattr(app, "_keymap", {}) or {}
    for b in bindings:
        if not isinstance(b, Binding):
            continue
        keys = keymap.get(b.id, b.key) if b.id else b.key
        shown = ", ".join(app.get_key_display(Binding(k.strip(), "")) for k in keys.split(",") if k.strip())
        table.add_row(Text(shown), Text(b.description or b.action), Text(b.id or ""))
    return table


class HelpScreen(ModalScreen[None]):
    CSS_PATH = DIALOGS_CSS
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close")]

    def __init__(self, bindings, keymap_note: str = "") -> None:
        super().__init__()
        self.bindings_list = list(bindings)
        self.keymap_note = keymap_note

    def compose(self) -> ComposeResult:
        with Vertical(id="help", classes="form"):
            yield Static(Text("Keys (also in the command palette, ctrl+p)", style="bold"))
            with VerticalScroll(id="help-body"):
                yield Static(bindings_table(self.app, self.bindings_list))
                filt = Text()
                filt.append("Filter (/): ", style="bold")
                filt.append(
                    f"{FILTER_KEYS} — words match text, task, file and id; {FILTER_STATES} — "
                    "e.g. cat:sf task:task-3 state:undecided retry"
                )
                yield Static(filt)
                if self.keymap_note:
                    yield Static(Text(self.keymap_note))
            yield Static(Text("escape closes"), classes="form-hint")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
