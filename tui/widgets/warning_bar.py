"""The warning bar: persistent states stay in view while they hold.

A firing safety valve, an applying watch-for and parse failures each get one line with
their figures. Transient events use notifications instead; this bar is for states.
"""

from __future__ import annotations

from typing import Any, Iterable

from rich.text import Text
from textual.widgets import Static

from scars.core.model import Feature
from scars.core.sanitize import one_line


def figures_text(figures: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in figures.items())


def warning_lines(feature: Feature, valves: Iterable[Any]) -> list[Text]:
    lines: list[Text] = []
    for v in valves:
        if not getattr(v, "active", False):
            continue
        kind = "SAFETY VALVE" if getattr(v, "kind", "") == "safety_valve" else "WATCH-FOR"
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"⚠ {kind} {v.id}: ", style="bold")
        t.append(one_line(str(v.message), 200))
        figs = figures_text(getattr(v, "figures", {}) or {})
        if figs:
            t.append(f" ({one_line(figs, 120)})")
        lines.append(t)
    n = len(feature.parse_failures)
    if n:
        t = Text(no_wrap=True, overflow="ellipsis")
        t.append(f"✗ PARSE FAILURES: {n} ", style="bold")
        files = ", ".join(pf.file for pf in feature.parse_failures[:3])
        more = f" +{n - 3} more" if n > 3 else ""
        t.append(one_line(f"report(s) not counted in signal_lost: {files}{more}", 200))
        lines.append(t)
    return lines


class WarningBar(Static):
    """Hidden when nothing applies; otherwise one line per warning."""

    def show(self, feature: Feature, valves: Iterable[Any]) -> list[Text]:
        lines = warning_lines(feature, valves)
        self.display = bool(lines)
        joined = Text("\n", no_wrap=True, overflow="ellipsis").join(lines) if lines else Text("")
        joined.no_wrap = True
        joined.overflow = "ellipsis"
        self.update(joined)
        return lines
