"""One line of key hints (a cheap stand-in for Footer, which recomposes on every focus change).

It honours the user keymap: a rebound key shows its new key.
"""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static


def short_label(description: str) -> str:
    """A binding's name in the key-hints line: its description up to " (" or ":", else its first word
    when that is longer than 12 characters ("Round gate: continue / stop" -> "Round gate")."""
    head = description.split(" (")[0].split(":")[0].strip()
    return head if len(head) <= 12 else head.split()[0]


def hints_text(app, bindings: Iterable[Binding]) -> Text:  # noqa: ANN001 - textual App
    keymap = getattr(app, "_keymap", {}) or {}
    t = Text(no_wrap=True, overflow="ellipsis")
    first = True
    for b in bindings:
        if not b.show:
            continue
        keys = keymap.get(b.id, b.key) if b.id else b.key
        key = keys.split(",")[0].strip()
        shown = app.get_key_display(Binding(key, ""))
        if not first:
            t.append(" ")
        first = False
        t.append(f" {shown} ", style="bold reverse")
        t.append(f" {short_label(b.description)}")
    return t


class KeyHints(Static):
    def __init__(self, bindings: Iterable[Binding], **kwargs) -> None:  # noqa: ANN003
        super().__init__("", **kwargs)
        self.bindings_list = list(bindings)

    def on_mount(self) -> None:
        self.refresh_hints()

    def refresh_hints(self) -> None:
        self.update(hints_text(self.app, self.bindings_list))
