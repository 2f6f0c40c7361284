"""`g`: the round gate — "Round R done. signal_lost N → N'. Fixed K, J remaining".

Shows the valve warnings and, when ``scars.core.advice.advisor`` is present, its advice beside
the choice (never instead of it). Blocked fixes get retry-with-context / reclassify-as-
defer. The screen returns the choice; the app records it through the session.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from scars.core.advice.advisor import advise_feature
from scars.core.gates.catalog import GATES
from scars.core.model import Feature
from scars.core.samsara.rounds import signal_before_round
from scars.core.sanitize import one_line
from scars.core.text import text_problem
from scars.tui.app.viewmodel import decision_state, item_text
from scars.tui.app.widgets.warning_bar import warning_lines

OUTCOMES = (("retry_with_context", "(A) retry with more context"), ("reclassify_as_defer", "(B) reclassify as defer"))


@dataclass
class GateSummary:
    round_no: int
    before: int
    after: int
    fixed: int
    remaining: int
    accepted: int
    deferred: int
    max_rounds: int
    blocked: list[tuple[str, str]] = field(default_factory=list)  # (item id, text)
    forced: bool = False  # the max-rounds valve fires: the only way on is a forced stop

    @property
    def prompt(self) -> str:
        return (
            f"Round {self.round_no} done. signal_lost {self.before} → {self.after}. "
            f"Fixed {self.fixed}, {self.remaining} remaining. (A) continue (B) stop, go to Validation"
        )


def gate_summary(
    feature: Feature,
    decisions: Mapping[str, Any],
    round_no: int | None,
    valves: Sequence[Any] = (),
    before: int | None = None,
) -> GateSummary:
    """The round summary; ``decisions`` are this round's triage, ``before`` its starting signal."""
    log = feature.iteration_log
    rounds = list(log.rounds) if log is not None else []
    rno = round_no or (rounds[-1].round + 1 if rounds else 1)
    if before is None:
        before = signal_before_round(log, rno, feature.signal_lost)
    states = {i: decision_state(d) for i, d in decisions.items()}
    fixed = sum(1 for s in states.values() if s == "fix")
    accepted = sum(1 for s in states.values() if s in ("accept", "pending"))
    deferred = sum(1 for s in states.values() if s == "defer")
    status_of = {r.file: r.completion_status for r in feature.reports}
    blocked = []
    by_id = {it.id: it for it in feature.items}
    for item_id, st in states.items():
        it = by_id.get(item_id)
        if it is None or st != "fix":
            continue
        if getattr(decisions[item_id], "blocked_outcome", None):
            continue
        if it.status == "blocked" or status_of.get(it.file) == "blocked":
            blocked.append((item_id, one_line(item_text(it), 120)))
    forced = any(getattr(v, "id", "") == "max_rounds" and getattr(v, "active", False) for v in valves)
    max_rounds = log.max_rounds if log is not None else 3
    return GateSummary(
        rno,
        int(before),
        int(feature.signal_lost),
        fixed,
        int(feature.signal_lost),
        accepted,
        deferred,
        max_rounds,
        blocked,
        forced,
    )


def advice_text(feature: Feature, decisions: Mapping[str, Any]) -> Text | None:
    """The advisor's advice for the next round: shown beside the choice, never instead of it."""
    try:
        advice = advise_feature(feature, decisions)
    except Exception as exc:  # noqa: BLE001 - advice must never block the gate
        return Text(f"Advisor unavailable: {one_line(str(exc), 160)}")
    t = Text()
    lines = advice.summary(width=96).splitlines()
    t.append(one_line(lines[0], 100) if lines else "Advice", style="bold")
    for line in lines[1:]:
        t.append("\n  " + one_line(line, 100))
    return t


class RoundGate(ModalScreen[dict | None]):
    """Returns {decision: continue|stop|forced_stop, reason, blocked: {item: outcome}} or None."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="gate.cancel"),
    ]

    def __init__(self, feature: Feature, summary: GateSummary, valves: Sequence[Any], advice: Text | None) -> None:
        super().__init__()
        self.feature = feature
        self.summary = summary
        self.valves = list(valves)
        self.advice = advice

    def compose(self) -> ComposeResult:
        s = self.summary
        with Vertical(id="gate", classes="form"):
            yield Label(Text(s.prompt.split(" (A)")[0], style="bold"), id="gate-title")
            yield Static(Text(f"Accepted {s.accepted}, deferred {s.deferred}. Round {s.round_no} of {s.max_rounds}."))
            with VerticalScroll(id="gate-body"):
                warn = warning_lines(self.feature, self.valves)
                if warn:
                    yield Static(Text("\n").join(warn), id="gate-warnings")
                if self.advice is not None:
                    yield Static(self.advice, id="gate-advice")
                for n, (item_id, text) in enumerate(s.blocked):
                    yield Static(Text(f"Blocked fix {item_id}: {text}"), classes="gate-blocked-label")
                    with RadioSet(id=f"blocked-{n}", classes="gate-blocked"):
                        for k, (_, label) in enumerate(OUTCOMES):
                            yield RadioButton(label, value=(k == 0))
            if s.forced:
                yield Static(
                    Text("Safety valve max_rounds fires: stopping is recorded as forced_stop."),
                    classes="form-error shown",
                )
            yield Label("Reason (recorded as decision_reason)", classes="form-label")
            yield Input(placeholder="why continue or stop", id="gate-reason", compact=True)
            yield Static("", id="gate-error", classes="form-error")
            with Horizontal(id="form-buttons"):
                yield Button("(A) Continue", id="gate-continue", variant="primary", disabled=s.forced, compact=True)
                yield Button("(B) Stop, go to Validation", id="gate-stop", compact=True)
                yield Button("Cancel", id="gate-cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#gate-reason", Input).focus()

    def result(self, choice: str) -> dict:
        reason = self.query_one("#gate-reason", Input).value.strip()
        decision = choice
        trigger = None
        if choice == "stop" and self.summary.forced:
            decision, trigger = "forced_stop", "max_rounds"
        blocked = {}
        for n, (item_id, _) in enumerate(self.summary.blocked):
            rs = self.query_one(f"#blocked-{n}", RadioSet)
            idx = rs.pressed_index if rs.pressed_index >= 0 else 0
            blocked[item_id] = OUTCOMES[idx][0]
        return {
            "decision": decision,
            "reason": reason,
            "blocked": blocked,
            "trigger": trigger,
            "prompt": self.summary.prompt,
        }

    def choose(self, choice: str) -> None:
        res = self.result(choice)
        problem = text_problem(res["reason"], question=GATES["round-continue"])
        if problem:
            self.query_one("#gate-error", Static).update(
                Text("✗ " + one_line(f"{problem} (it is recorded in the log)", 200))
            )
            self.query_one("#gate-error", Static).add_class("shown")
            self.query_one("#gate-reason", Input).focus()
            return
        self.dismiss(res)

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "gate-continue":
            self.choose("continue")
        elif event.button.id == "gate-stop":
            self.choose("stop")
        else:
            self.dismiss(None)
