"""A row of choices that takes the focus as one widget: a gate's answers, a confirmation's yes / no.

The rule of every modal that has answer keys (issue 27): a letter never records anything. Here
an answer key only *marks* its choice (``▶`` before it, and the highlight), ←/→ move the mark,
and Enter (or a click on a choice) picks the marked one: :class:`Choices.Picked`, which the screen
records. The buttons inside never take the focus themselves, so no letter typed while a button
"has the focus" can act, and the answer keys act only while this row has it — never while a text
field does (the letters type there) — and never reach the screen below. A key of a choice that is
not available (a refused answer) marks nothing: :class:`Choices.Unavailable` lets the screen say why.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Button

from scars.core.records import record
from scars.core.sanitize import one_line

MARK = "▶ "


@record(slots=True)
class Choice:
    """One choice: ``value`` returned, ``key`` marks it, ``label`` shown (with its key), ``id`` the
    button's, ``disabled`` shown but not available."""

    value: str
    key: str
    label: str
    id: str
    disabled: bool = False


class Choices(Horizontal, can_focus=True):
    """See the module docstring. ``value``: the marked choice (None: none marked yet)."""

    BINDINGS = [
        Binding("left", "move(-1)", "Previous choice", show=False),
        Binding("right", "move(1)", "Next choice", show=False),
        Binding("enter", "pick", "Record the marked choice", show=False),
    ]

    class _About(Message):
        """A message about the choice ``value`` of ``choices``."""

        def __init__(self, choices: Choices, value: str) -> None:
            super().__init__()
            self.choices = choices
            self.value = value

        @property
        def control(self) -> Choices:
            return self.choices

    class Picked(_About):
        """Enter (or a click) on the marked choice ``value``."""

    class Unavailable(_About):
        """The key (or a click) of a choice that is shown but not available."""

    def __init__(self, choices: Sequence[Choice], *, value: str | None = None, id: str | None = None) -> None:
        super().__init__(id=id)
        self.choices = list(choices)
        usable = [c.value for c in self.choices if not c.disabled]
        self.value: str | None = value if value in usable else (usable[0] if usable else None)

    def compose(self) -> ComposeResult:
        for c in self.choices:
            yield Button(self._label(c), id=c.id, disabled=c.disabled, compact=True)

    def on_mount(self) -> None:
        for button in self.query(Button):
            button.can_focus = False  # the row takes the focus, never one of its buttons
        self._show()

    def _label(self, c: Choice) -> Text:
        return Text((MARK if c.value == self.value else "  ") + one_line(c.label, 80))

    def _show(self) -> None:
        for c in self.choices:
            button = self.query_one(f"#{c.id}", Button)
            button.label = self._label(c)
            button.set_class(c.value == self.value, "-marked")

    def mark(self, value: str) -> bool:
        """Mark ``value`` (True), or say it is not available (False)."""
        choice = next((c for c in self.choices if c.value == value), None)
        if choice is None:
            return False
        if choice.disabled:
            self.post_message(self.Unavailable(self, value))
            return False
        self.value = value
        self._show()
        return True

    def on_key(self, event: events.Key) -> None:
        """An answer key marks its choice; it records nothing (Enter does)."""
        choice = next((c for c in self.choices if event.character and c.key == event.character), None)
        if choice is not None:
            event.stop()
            event.prevent_default()
            self.mark(choice.value)

    def action_move(self, step: int) -> None:
        usable = [c.value for c in self.choices if not c.disabled]
        if not usable:
            return
        at = usable.index(self.value) if self.value in usable else -step
        self.mark(usable[(at + step) % len(usable)])

    def action_pick(self) -> None:
        if self.value is not None:
            self.post_message(self.Picked(self, self.value))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a choice: marked and picked at once (the click is on a visible choice)."""
        event.stop()
        choice = next((c for c in self.choices if c.id == event.button.id), None)
        if choice is not None and self.mark(choice.value):
            self.action_pick()
