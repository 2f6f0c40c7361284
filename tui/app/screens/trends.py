"""`t`: signal_lost per round, per-category counts and fixed/accepted/deferred per round."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from scars.core.model import CATEGORIES, CATEGORY_LABEL, Feature
from scars.core.records import replace
from scars.core.samsara.rounds import signal_series
from scars.core.sanitize import one_line
from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.viewmodel import decision_state
from scars.tui.app.widgets.chart import BarChart, Series


def trend_charts(feature: Feature, decisions: Mapping[str, Any]) -> list[BarChart]:
    log = feature.iteration_log
    rounds = list(log.rounds) if log is not None else []
    series = list(signal_series(log, feature.signal_lost))
    labels = [f"R{p.round}" if p.round is not None else p.label for p in series]
    if series and labels[-1] != "now":  # the series leaves "now" out when it equals the last point
        labels.append("now")
        series.append(replace(series[-1], value=feature.signal_lost, basis="recounted", round=None, label="now"))
    signal = BarChart(
        "signal_lost per round: recorded by the loop █ / recounted by scars ▓",
        labels,
        [
            Series("recorded by the loop", [p.value if p.basis == "recorded" else None for p in series], "█"),
            Series("recounted by scars", [p.value if p.basis == "recounted" else None for p in series], "▓"),
        ],
        height=6,
        y_label="items",
    )
    counts: list[int | None] = [int(feature.counts.get(c, 0)) for c in CATEGORIES]
    cats = BarChart(
        "Remaining items per category (now)",
        [CATEGORY_LABEL[c] for c in CATEGORIES],
        [Series("items", counts)],
        height=5,
        y_label="items",
    )
    fix: list[int | None] = []
    acc: list[int | None] = []
    dfr: list[int | None] = []
    x: list[str] = []
    for r in rounds:
        x.append(f"R{r.round}")
        fix.append(len(r.fix))
        acc.append(len(r.accept))
        dfr.append(len(r.defer))
    states = [decision_state(d) for d in decisions.values() if not d.carried]  # carried ones are in their round
    x.append("now")
    fix.append(states.count("fix"))
    acc.append(states.count("accept") + states.count("pending"))
    dfr.append(states.count("defer"))
    decided = BarChart(
        "Decisions per round: fixed █ / accepted ▓ / deferred ░",
        x,
        [Series("fixed", fix, "█"), Series("accepted", acc, "▓"), Series("deferred", dfr, "░")],
        height=6,
        y_label="items",
    )
    return [signal, cats, decided]


class TrendsScreen(Screen[None]):
    CSS_PATH = DIALOGS_CSS
    BINDINGS = [Binding("escape,q,t", "app.pop_screen", "Back", id="trends.back")]

    def __init__(self, feature: Feature, decisions: Mapping[str, Any]) -> None:
        super().__init__()
        self.feature = feature
        self.decisions = dict(decisions)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="trends"):
            f = self.feature
            title = Text(f"Trends — {one_line(f.name, 60)}", style="bold")
            title.append(f"   signal_lost now {f.signal_lost}", style="")
            parts: list = [title, Text("")]
            for chart in trend_charts(self.feature, self.decisions):
                parts.append(chart)
                parts.append(Text(""))
            yield Static(Group(*parts), id="trends-body")
        yield Static(Text("escape / t / q: back to the items"), classes="form-hint")
