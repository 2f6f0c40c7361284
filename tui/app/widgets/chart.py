"""A small bar chart drawn with block characters, with a y axis, labels and values.

No plotting dependency: the chart is a Rich renderable built from text, deterministic
and cheap, so it snapshots stably.
"""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.segment import Segment
from rich.text import Text

from scars.core.records import record

BAR = "█"
# A solid bar's top cell in eighths, so 13 and 15 on a 6-row axis of 15 differ (▂ vs █).
EIGHTHS = " ▁▂▃▄▅▆▇█"


def bar_cell(glyph: str, value: float, low: float, step: float) -> str:
    """The glyph of one bar cell spanning (low, low + step]: full, empty, or — for the solid bar —
    the eighth nearest to how much of the cell the value fills (a shade glyph has no eighths: it
    fills its cell when the value reaches half of it)."""
    if value <= low or value <= 0:
        return " "
    part = min((value - low) / step, 1.0)
    if glyph != BAR:
        return glyph if part >= 0.5 or part == 1.0 else " "
    return EIGHTHS[max(1, round(part * 8))]


@record(frozen=False)
class Series:
    name: str
    values: list[int | None]  # None: no value at this label (no bar; "–" under it)
    glyph: str = BAR
    style: str = ""


@record(frozen=False)
class BarChart:
    """Grouped vertical bars: one group per x label, one bar per series."""

    title: str
    x_labels: list[str]
    series: list[Series]
    height: int = 8
    y_label: str = ""
    legend: bool = True
    bar_width: int = 2

    def max_value(self) -> int:
        return max([v for s in self.series for v in s.values if v is not None] + [1])

    def lines(self) -> list[Text]:
        top = self.max_value()
        height = max(self.height, 2)
        axis_w = max(len(str(top)), len(self.y_label[:6]), 1)
        group_w = max(
            len(self.series) * (self.bar_width) + (len(self.series) - 1) + 2,
            min(max((len(x) for x in self.x_labels), default=1) + 1, 16),
        )
        out: list[Text] = []
        out.append(Text(self.title, style="bold"))
        if not self.x_labels:
            out.append(Text("  no data yet"))
            return out
        if self.y_label:
            out.append(Text(self.y_label[:axis_w].rjust(axis_w)))
        for row in range(height, 0, -1):
            level_lo = (row - 1) * top / height
            if row == height:
                label = str(top)
            elif row == height // 2 and top >= height // 2 * 2:
                label = str(round(row * top / height))
            else:
                label = ""
            t = Text(label.rjust(axis_w) + " ┤" if label else " " * axis_w + " │")
            bars_w = len(self.series) * self.bar_width + len(self.series) - 1
            for gi in range(len(self.x_labels)):
                pad = group_w - bars_w
                t.append(" " * (pad // 2))
                for si, s in enumerate(self.series):
                    v = (s.values[gi] if gi < len(s.values) else 0) or 0
                    t.append(bar_cell(s.glyph, v, level_lo, top / height) * self.bar_width, style=s.style)
                    if si < len(self.series) - 1:
                        t.append(" ")
                t.append(" " * (pad - pad // 2))
            out.append(t)
        out.append(Text("0".rjust(axis_w) + " └" + "─" * (group_w * len(self.x_labels))))
        xl = Text(" " * (axis_w + 2))
        for lab in self.x_labels:
            xl.append(lab[: group_w - 1].center(group_w))
        out.append(xl)
        vals = Text(" " * (axis_w + 2))
        for gi in range(len(self.x_labels)):
            cell = "/".join(
                ("–" if s.values[gi] is None else str(s.values[gi])) if gi < len(s.values) else "0" for s in self.series
            )
            vals.append(cell[: group_w - 1].center(group_w))
        out.append(vals)
        if self.legend and len(self.series) > 1:
            leg = Text("  ")
            for s in self.series:
                leg.append(s.glyph * 2, style=s.style)
                leg.append(f" {s.name}   ")
            out.append(leg)
        return out

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        # Segments, not Text: a wrapping renderer would strip the axis's leading spaces. The grid
        # is cropped at the width; the title and the legend (words) wrap, so none of them is cut.
        lines = self.lines()
        prose = {0, len(lines) - 1} if self.legend and len(self.series) > 1 and self.x_labels else {0}
        for n, line in enumerate(lines):
            if n in prose and line.cell_len > options.max_width:
                indent = len(line.plain) - len(line.plain.lstrip(" "))
                for part in line.wrap(console, max(options.max_width - indent, 1)):
                    yield from (Text(" " * indent) + part).render(console, end="")
                    yield Segment.line()
                continue
            line.truncate(options.max_width, overflow="crop")
            yield from line.render(console, end="")
            yield Segment.line()
