"""The app header: feature, round R of max, execution mode, driver, signal_lost and its trend."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from scars.core.model import Feature
from scars.core.samsara.rounds import DEFAULT_MAX_ROUNDS, signal_series
from scars.core.sanitize import one_line


def header_text(
    feature: Feature, *, round_no: int | None, progress: tuple[int, int], driver: str | None, read_only: str | None
) -> Text:
    log = feature.iteration_log
    max_rounds = log.max_rounds if log is not None else DEFAULT_MAX_ROUNDS
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(one_line(feature.name, 48), style="bold")
    if read_only:
        t.append("  ")
        t.append("READ-ONLY", style="bold reverse")
    if driver:
        t.append("  driver ")
        t.append(one_line(driver, 32), style="bold")
    decided, total = progress
    t.append(f"  [{decided}/{total}]")
    t.append(f"  round {round_no if round_no is not None else '—'} of {max_rounds}")
    return t


class ScarsHeader(Horizontal):
    """Facts on the left, ``signal_lost N`` and a Sparkline of it across rounds on the right."""

    def compose(self) -> ComposeResult:
        yield Static("scars", id="header-facts")
        yield Static("", id="header-signal")
        yield Sparkline([], id="header-spark")

    def show(
        self,
        feature: Feature,
        *,
        round_no: int | None,
        progress: tuple[int, int],
        driver: str | None,
        read_only: str | None,
    ) -> None:
        self.query_one("#header-facts", Static).update(
            header_text(feature, round_no=round_no, progress=progress, driver=driver, read_only=read_only)
        )
        series = [p.value for p in signal_series(feature.iteration_log, feature.signal_lost)]
        trend = " → ".join(str(v) for v in series[-4:])
        # The execution mode beside signal_lost: on a narrow screen this is the header's second line.
        mode = one_line(feature.execution_mode or "mode unknown", 24)
        self.query_one("#header-signal", Static).update(
            Text(f"{mode} · signal_lost {feature.signal_lost} ({trend})", no_wrap=True, overflow="ellipsis")
        )
        spark = self.query_one("#header-spark", Sparkline)
        spark.data = series if len(series) > 1 else series * 2
