"""Confirmations: a bulk decision (lists every item it will decide), and the start of a round a
decision or the round gate cannot open by itself (after a stop; the gate with no round open).

Yes / no is a :class:`~scars.tui.app.widgets.choices.Choices` row: `y` / `n` mark a choice, Enter
records the marked one, esc is no. No letter confirms or cancels by itself, so a sentence typed at
the screen records nothing and never reaches the screen below (issue 27).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from scars.core.sanitize import one_line
from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.widgets.choices import Choice, Choices

YES_NO_HINT = "y yes · n no · Enter records the marked choice · esc no"


def subject_line(text: str) -> Text:
    """One item a dialog is about, on one line (its ``form-subject`` class cuts it with an
    ellipsis at the dialog's width, never wrapped: each listed item takes one row of its list)."""
    return Text("• " + one_line(text, 200))


class YesNo(ModalScreen[bool]):
    """``True`` when "yes" is marked and Enter pressed (or clicked); esc and "no" are False."""

    CSS_PATH = DIALOGS_CSS

    BINDINGS = [Binding("escape", "cancel", "No", id="confirm.no")]
    YES = "Yes (y)"
    MARKED = "yes"  # the choice marked when the screen opens

    def choices(self) -> Choices:
        return Choices(
            [Choice("yes", "y", self.YES, "confirm-yes"), Choice("no", "n", "No (n)", "confirm-no")],
            value=self.MARKED,
            id="confirm-choices",
        )

    def on_mount(self) -> None:
        self.query_one("#confirm-choices", Choices).focus()

    def on_choices_picked(self, event: Choices.Picked) -> None:
        event.stop()
        self.dismiss(event.value == "yes")

    def action_cancel(self) -> None:
        self.dismiss(False)


class ConfirmBulk(YesNo):
    """``True`` when the user confirms deciding all listed items as ``action``."""

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
                    yield Static(subject_line(line), classes="form-subject")
                if n > 500:
                    yield Static(Text(f"… and {n - 500} more"))
            yield Static(Text(self.note or "One undo (u) reverts the whole batch."), classes="form-hint")
            yield self.choices()
            yield Static(Text(YES_NO_HINT), classes="form-hint")


class ConfirmRoundStart(YesNo):
    """``True`` when the person starts the next round: after a stop (the iteration went on to
    Validation) or to answer the round gate when no round is open. "No" is marked at first: the
    start is recorded, so it takes `y` and Enter."""

    YES = "Yes, start it (y)"
    MARKED = "no"

    def __init__(self, title: str, note: str) -> None:
        super().__init__()
        self.title_text = title
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm", classes="form"):
            yield Label(Text(one_line(self.title_text, 200), style="bold"), id="confirm-title")
            yield Static(Text(one_line(self.note, 600)), id="confirm-note")
            yield self.choices()
            yield Static(Text(YES_NO_HINT), classes="form-hint")


class OverrideReason(ModalScreen["str | None"]):
    """A safety valve's override: what it stops, and the reason to go on anyway (checked by core
    when recorded). Returns the reason, or None when cancelled."""

    CSS_PATH = DIALOGS_CSS

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
