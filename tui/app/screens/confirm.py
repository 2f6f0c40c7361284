"""Confirmation of a bulk decision: lists every item it will decide."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

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


class OverrideReason(ModalScreen["str | None"]):
    """A safety valve's override: what it stops, and the reason to go on anyway (checked by core
    when recorded). Returns the reason, or None when cancelled."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="override.cancel")]

    def __init__(self, title: str, message: str) -> None:
        super().__init__()
        self.title_text = title
        self.message = message

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm", classes="form"):
            yield Label(Text(self.title_text, style="bold"))
            yield Static(Text(one_line(self.message, 600)))
            yield Label("Why go on anyway? (recorded with the round)", classes="form-label")
            yield Input(placeholder="the reason to override the safety valve", id="override-reason", compact=True)
            with Horizontal(id="form-buttons"):
                yield Button("Override", id="override-ok", variant="warning", compact=True)
                yield Button("Cancel (esc)", id="override-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#override-reason", Input).focus()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(event.value.strip() or None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "override-ok":
            self.dismiss(self.query_one("#override-reason", Input).value.strip() or None)
        else:
            self.dismiss(None)
