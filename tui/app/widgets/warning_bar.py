"""The warning bar: persistent states stay in view while they hold.

A firing safety valve, an applying watch-for, parse failures and decisions to make again
(made on another item than the one holding their id now) each get a line in words — the
valve's own message names its figures — wrapped, never cut, at any width. Transient events use
notifications instead; this bar is for states.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.widgets import Static

from scars.core.model import Feature
from scars.core.samsara.rounds import Valve
from scars.core.sanitize import one_line


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else ('S' if word.isupper() else 's')}"


def warning_lines(feature: Feature, valves: Iterable[Valve], moved: dict[str, Any] | None = None) -> list[Text]:
    lines: list[Text] = []
    for v in valves:
        if not v.active:
            continue
        kind = "SAFETY VALVE" if v.kind == "safety_valve" else "WATCH-FOR"
        t = Text()
        t.append(f"⚠ {kind} {v.id.replace('_', ' ')}: ", style="bold")
        t.append(one_line(str(v.message), 300))
        source = str(v.figures.get("source") or "")
        if source.startswith("iteration-log"):  # a watch-for read from a closed round, not today's decisions
            t.append(f" (from {one_line(source, 40)}'s triage)")
        lines.append(t)
    failures = feature.parse_failures
    if failures:
        t = Text()
        files = list(dict.fromkeys(pf.file for pf in failures))
        t.append(f"✗ {_plural(len(failures), 'PARSE FAILURE')} in {_plural(len(files), 'file')}: ", style="bold")
        # An unreadable registry holds no items: its refs stay counted (formats.md §1.7).
        reports = [f for f in files if not any(pf.of_registry for pf in failures if pf.file == f)]
        said = ["the registry is unreadable: systemic refs unknown, still counted"] if len(reports) < len(files) else []
        if reports:
            shown = ", ".join(reports[:3]) + (f" +{len(reports) - 3} more" if len(reports) > 3 else "")
            said.append(f"not counted in signal_lost: {shown}")
        t.append(one_line("; ".join(said), 300))
        lines.append(t)
    if moved:
        # Decisions made on another item than the one holding their id now (docs/commands.md, Item ids).
        t = Text()
        t.append(f"⚠ DECIDE AGAIN: {_plural(len(moved), 'decision')} ", style="bold")
        t.append(
            one_line(
                "made on another item with the same text (an item was inserted "
                "before it, or edited), not applied: "
                + ", ".join(sorted(moved)[:4])
                + (f" +{len(moved) - 4} more" if len(moved) > 4 else ""),
                300,
            )
        )
        lines.append(t)
    return lines


class WarningBar(Static):
    """Hidden when nothing applies; otherwise one line per warning."""

    def show(self, feature: Feature, valves: Iterable[Any], moved: dict[str, Any] | None = None) -> list[Text]:
        lines = warning_lines(feature, valves, moved)
        self.display = bool(lines)
        self.update(Text("\n").join(lines) if lines else Text(""))
        return lines
