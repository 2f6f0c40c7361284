"""The app header: feature, round R of max, execution mode, driver, signal_lost and its trend."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Sparkline, Static

from scars.core.model import Feature
from scars.core.samsara.reconcile import reconcile
from scars.core.samsara.rounds import BASIS_LABEL, DEFAULT_MAX_ROUNDS, advice_series, series_by_basis, signal_series
from scars.core.sanitize import one_line


def header_text(
    feature: Feature,
    *,
    round_no: int | None,
    progress: tuple[int, int],
    driver: str | None,
    read_only: str | None,
    stopped: tuple[int, str] | None = None,
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
    if stopped is not None:
        t.append(f"  stopped after round {stopped[0]} of {max_rounds}", style="bold")
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
        stopped: tuple[int, str] | None = None,
    ) -> None:
        self.query_one("#header-facts", Static).update(
            header_text(
                feature, round_no=round_no, progress=progress, driver=driver, read_only=read_only, stopped=stopped
            )
        )
        text, tooltip = signal_text(feature)
        signal = self.query_one("#header-signal", Static)
        # The execution mode beside signal_lost: on a narrow screen this is the header's second line.
        mode = one_line(feature.execution_mode or "mode unknown", 24)
        signal.update(Text(f"{mode} · {text}", no_wrap=True, overflow="ellipsis"))
        signal.tooltip = tooltip
        # The sparkline draws one count only: the loop's record, or scars' recount and now.
        run = advice_series(feature.iteration_log, feature.signal_lost)
        series = [p.value for p in run]
        if not run or run[-1].basis == "recounted":
            series.append(feature.signal_lost)
        spark = self.query_one("#header-spark", Sparkline)
        spark.data = series if len(series) > 1 else series * 2
