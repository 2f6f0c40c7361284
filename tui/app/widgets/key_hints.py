"""One line of key hints (a cheap stand-in for Footer, which recomposes on every focus change).

It honours the user keymap: a rebound key shows its new key.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Static


def short_label(description: str) -> str:
    """A binding's name in the key-hints line: its description up to " (" or ":", else its first word
    when that is longer than 12 characters ("Round gate: continue / stop" -> "Round gate")."""
    head = description.split(" (")[0].split(":")[0].strip()
    return head if len(head) <= 12 else head.split()[0]


def hints_text(  # textual App
    app, bindings: Iterable[Binding], width: int | None = None, offers: Callable[[str], bool] | None = None
) -> Text:
    """The shown bindings as `` key  Name`` pairs; within ``width`` cells only the pairs that fit
    whole, the last ones (help, quit) always kept: a hint is never cut. ``offers(action)``: False
    for an action the screen does not offer now (a write in a read-only session)."""
    keymap = getattr(app, "_keymap", {}) or {}
    pairs = []
    for b in bindings:
        if not b.show or (offers is not None and not offers(b.action)):  # a write a read-only session refuses
            continue
        keys = keymap.get(b.id, b.key) if b.id else b.key
        key = keys.split(",")[0].strip()
        pairs.append((app.get_key_display(Binding(key, "")), short_label(b.description)))
    cost = [len(k) + 2 + 1 + len(label) + 1 for k, label in pairs]  # " k " + " Label" + gap
    keep = set(range(len(pairs)))
    if width is not None:
        must = {len(pairs) - 2, len(pairs) - 1} & keep
        used = sum(cost[i] for i in must)
        keep = set(must)
        for i in range(len(pairs)):
            if i not in must and used + cost[i] <= width:
                keep.add(i)
                used += cost[i]
            elif i not in must:
                break
    t = Text(no_wrap=True, overflow="crop")
    for n, i in enumerate(sorted(keep)):
        if n:
            t.append(" ")
        key, label = pairs[i]
        t.append(f" {key} ", style="bold reverse")
        t.append(f" {label}")
    return t


class KeyHints(Static):
    def __init__(self, bindings: Iterable[Binding], **kwargs) -> None:
        super().__init__("", **kwargs)
        self.bindings_list = list(bindings)

    def on_mount(self) -> None:
        self.refresh_hints()

    def on_resize(self) -> None:
        self.refresh_hints()

    def refresh_hints(self) -> None:
        offers = getattr(self.screen, "offers", None)
        self.update(hints_text(self.app, self.bindings_list, self.size.width or None, offers))
