"""The warning bar: persistent states stay in view while they hold.

A firing safety valve, an applying watch-for, parse failures and decisions to make again
(made on another item than the one holding their id now) each get one line with their figures. Transient events use notifications instead; this bar is for states.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from rich.text import Text
from textual.widgets import Static

from scars.core.model import Feature
from scars.core.samsara.rounds import Valve
from scars.core.sanitize import one_line


def figures_text(figures: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in figures.items())


def warning_lines(feature: Feature, valves: Iterable[Valve], moved: dict[str, Any] | None = None) -> list[Text]:
    lines: list[Text] = []
    for v in valves:
        if not v.active:
            continue
        kind = "SAFETY VALVE" if v.kind == "safety_valve" else "WATCH-FOR"
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"⚠ {kind} {v.id}: ", style="bold")
        t.append(one_line(str(v.message), 200))
        figs = figures_text(v.figures)
        if figs:
            t.append(f" ({one_line(figs, 120)})")
        lines.append(t)
    n = len(feature.parse_failures)
    if n:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"✗ PARSE FAILURES: {n} ", style="bold")
        # An unreadable registry holds no items: its refs stay counted (formats.md §1.7).
        others = [pf.file for pf in feature.parse_failures if not pf.of_registry]
        said = ["registry unreadable: systemic refs unknown, still counted"] if len(others) < n else []
        if others:
            files = ", ".join(others[:3])
            more = f" +{len(others) - 3} more" if len(others) > 3 else ""
            said.append(f"report(s) not counted in signal_lost: {files}{more}")
        t.append(one_line("; ".join(said), 200))
        lines.append(t)
    if moved:
        # Decisions made on another item than the one holding their id now (README, Item ids).
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"⚠ DECIDE AGAIN: {len(moved)} ", style="bold")
        t.append(
            one_line(
                "decision(s) made on another item with the same text (an item was inserted "
                "before it, or edited), not applied: "
                + ", ".join(sorted(moved)[:4])
                + (f" +{len(moved) - 4} more" if len(moved) > 4 else ""),
                200,
            )
        )
        lines.append(t)
    return lines


class WarningBar(Static):
    """Hidden when nothing applies; otherwise one line per warning."""

    def show(self, feature: Feature, valves: Iterable[Any], moved: dict[str, Any] | None = None) -> list[Text]:
        lines = warning_lines(feature, valves, moved)
        self.display = bool(lines)
        joined = Text("\n", no_wrap=True, overflow="ellipsis").join(lines) if lines else Text("")
        joined.no_wrap = True
        joined.overflow = "ellipsis"
        self.update(joined)
        return lines
