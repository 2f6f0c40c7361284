"""Command-palette provider: every key binding of the current screen as a command.

Terminals, multiplexers and IDEs swallow keys; the palette (ctrl+p) reaches every action
by name.
"""

from __future__ import annotations

from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider


def _commands(screen) -> list[tuple[str, str, str]]:  # textual Screen
    out = []
    app = screen.app
    keymap = getattr(app, "_keymap", {}) or {}
    offers = getattr(screen, "offers", None)
    for b in getattr(screen, "BINDINGS", ()):
        if not isinstance(b, Binding) or not b.id or b.action.startswith("app.command_palette"):
            continue
        if offers is not None and not offers(b.action):  # a write this read-only session refuses
            continue
        keys = keymap.get(b.id, b.key)
        out.append((b.description or b.action, b.action, keys))
    return out


class ScarsCommands(Provider):
    async def discover(self) -> Hits:
        for name, action, keys in _commands(self.screen):
            yield DiscoveryHit(name, partial(self.screen.run_action, action), help=f"key: {keys}")

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, action, keys in _commands(self.screen):
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), partial(self.screen.run_action, action), help=f"key: {keys}")
