"""Confirmation of a bulk decision: lists every item it will decide."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

from scars.core.sanitize import one_line


class ConfirmBulk(ModalScreen[bool]):
    """``True`` when the user confirms deciding all listed items as ``action``."""

    BINDINGS = [
        Binding("y", "confirm", "Yes", id="confirm.yes"),
        Binding("n,escape", "cancel", "No", id="confirm.no"),
    ]

    def __init__(self, action: str, lines: Sequence[str], note: str = "") -> None:
        super().__init__()
        self.action_name = action
        self.lines = list(lines)
        self.note = note

    def compose(self) -> ComposeResult:
        n = len(self.lines)
        with Vertical(id="confirm", classes="form"):
            yield Label(
                Text(f"Decide {n} marked item{'s' if n != 1 else ''} as {self.action_name.upper()}?", style="bold")
            )
            with VerticalScroll(id="confirm-list"):
                for line in self.lines[:500]:
                    yield Static(Text("• " + one_line(line, 200)))
                if n > 500:
                    yield Static(Text(f"… and {n - 500} more"))
            yield Static(Text(self.note or "One undo (u) reverts the whole batch."), classes="form-hint")
            with Horizontal(id="form-buttons"):
                yield Button("Yes (y)", id="confirm-yes", variant="primary", compact=True)
                yield Button("No (n)", id="confirm-no", compact=True)

    def on_mount(self) -> None:
        self.query_one("#confirm-yes", Button).focus()

    def action_confirm(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "confirm-yes")
