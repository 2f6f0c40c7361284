"""The app header: feature, round R of max, execution mode, driver, signal_lost and its trend."""

from __future__ import annotations

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from scars.core.model import Feature
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import (
    BASIS_LABEL,
    DEFAULT_MAX_ROUNDS,
    one_basis_series,
    series_by_basis,
    signal_series,
)
from scars.core.sanitize import one_line


def header_text(
    feature: Feature,
    *,
    round_no: int | None,
    progress: tuple[int, int],
    driver: str | None,
    read_only: str | None,
    stopped: tuple[int, str] | None = None,
    round_open: bool = False,
) -> Text:
    """``round_no`` is the open round (``round_open``) or the number the next round gets; a next
    round past max_rounds is not shown as if it were running: it starts only with the max-rounds
    override (the valve of ``scars round start``), and the header says so."""
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
    if stopped is not None:  # how to go on is the detail pane's (a decision asks to start the next round)
        t.append(f"  stopped after round {stopped[0]} of {max_rounds}", style="bold")
    elif round_no is not None and round_no > max_rounds and not round_open:
        t.append(f"  {round_no - 1} of {max_rounds} rounds done · round {round_no} needs the max-rounds override")
    elif round_no is not None and round_no > max_rounds:
        t.append(f"  round {round_no} of {max_rounds} (max-rounds override)")
    else:
        t.append(f"  round {round_no if round_no is not None else '—'} of {max_rounds}")
    return t


def signal_text(feature: Feature) -> tuple[str, str]:
    """The header's signal_lost and its tooltip: the recount now (``scars``) and beside it,
    labelled ``loop``, what the loop recorded when the log holds the loop's own figures; the
    tooltip says by how much and why the two differ."""
    now = feature.signal_lost
    by = series_by_basis(signal_series(feature.iteration_log, now))
    recorded = "→".join(str(p.value) for p in by["recorded"][-3:])
    recounted = "→".join(str(p.value) for p in by["recounted"][-3:])
    if not recorded:
        return f"signal_lost {now} ({recounted})", f"signal_lost {BASIS_LABEL['recounted']}: {recounted}"
    scars = f"scars {recounted}" if len(by["recounted"]) > 1 else "scars"
    return f"signal_lost {now} {scars} · loop {recorded}", reconcile(feature).summary()


SPARK_WIDTH = (16, 8)  # the sparkline's cells on one line, and on the second line


class ScarsHeader(Horizontal):
    """Facts on the left, ``signal_lost N`` and a Sparkline of it across rounds on the right.

    When the three do not fit on one line (below 100 columns, or a long series), signal_lost goes
    to a second line (class ``-two-line``); when it does not fit there beside the sparkline either,
    the sparkline goes (class ``-no-spark``: the text says the series), so the loop's figures are
    never the part that is cut.
    """

    _widths: tuple[int, int] = (0, 0)  # cells of the facts and of the signal text last shown

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
        stopped: tuple[int, str] | None = None,
        round_open: bool = False,
    ) -> None:
        facts = header_text(
            feature,
            round_no=round_no,
            progress=progress,
            driver=driver,
            read_only=read_only,
            stopped=stopped,
            round_open=round_open,
        )
        self.query_one("#header-facts", Static).update(facts)
        text, tooltip = signal_text(feature)
        signal = self.query_one("#header-signal", Static)
        # The execution mode beside signal_lost: on a narrow screen this is the header's second line.
        mode = one_line(feature.execution_mode or "mode unknown", 24)
        signal_line = Text(f"{mode} · {text}", no_wrap=True, overflow="ellipsis")
        signal.update(signal_line)
        signal.tooltip = tooltip
        self._widths = (facts.cell_len, signal_line.cell_len)
        self._fit()
        # The sparkline draws one count only: the loop's record, or scars' recount and now.
        series = [p.value for p in one_basis_series(feature.iteration_log, feature.signal_lost).points]
        spark = self.query_one("#header-spark", Sparkline)
        spark.data = series if len(series) > 1 else series * 2

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        width = self.size.width - 2  # the header's padding
        if width <= 0:
            return
        facts, signal = self._widths
        narrow = self.screen.has_class("-narrow")
        two_lines = narrow or facts + signal + 2 + SPARK_WIDTH[0] > width
        self.set_class(two_lines and not narrow, "-two-line")
        self.set_class(two_lines and signal + SPARK_WIDTH[1] > width, "-no-spark")
