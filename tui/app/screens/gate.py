"""`g`: the round gate — its headline (core's ``round_headline``: "Round R done. signal_lost N → N'.
Fixed K, J remaining", or that nothing was decided in the open round yet).

Renders the Evidence core computes for ``scars gate round-continue`` / ``safety-valve`` (the
figures, the valve warnings, the advice beside the choice — never instead of it) and, for each
fix of the round the implementer reported BLOCKED, the ``blocked-fix`` gate's Evidence with its
two outcomes. The screen checks the answers with core's ``validate_answer`` and returns them;
the app records them through the gates' one record path (``scars.core.gates.record``).

The answers are a :class:`~scars.tui.app.widgets.choices.Choices` row, which has the focus when the
gate opens: `a` / `b` mark a choice, Enter records the marked one. Tab goes from there to the first
field a person fills in (a blocked fix's outcome, else Rule 3's first field), where letters type;
no letter records anything, wherever the focus is (issue 27).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Input, Label, RadioButton, RadioSet, Static

from scars.core.errors import DecisionRefused
from scars.core.gatekit.evidence import Evidence, validate_answer
from scars.core.loops.samsara.rule3 import round_fields
from scars.core.sanitize import one_line, visible
from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.widgets.choices import Choice, Choices


def figures_text(evidence: Evidence) -> Text:
    """The gate's figures, one ``label: value`` line each (the label bold, as ``scars gate`` prints
    it), inert."""
    return Text("\n").join(
        Text.assemble((f"{one_line(label)}: ", "bold"), visible(str(value))) for label, value in evidence.figures
    )


RULE3_INPUTS = (
    ("gate-budget", "budget_spent", "budget spent: implementer_dispatches=1,validation_runs=2 … or none"),
    ("gate-evidence", "evidence_gained", "evidence gained (texts separated by ;) or none"),
    ("gate-risk", "residual_risk", "residual risk left (texts separated by ;) or none"),
)


def _prefill(value: Any) -> str:
    """A Rule-3 value from the fix reports as the input shows it (empty when none was reported)."""
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    if isinstance(value, list):
        return "; ".join(one_line(str(x)) for x in value)
    return ""


class RoundGate(ModalScreen[dict | None]):
    """Returns {answer: continue|stop, reason, blocked: {item: retry|defer}} or None."""

    CSS_PATH = DIALOGS_CSS

    # The letters are the gate's own (catalog: a continue, b stop) and only mark a choice while the
    # choices have the focus (Choices); Enter records. In a text field they type; Enter there
    # records the answer last tried and refused for want of that text (or moves to the choices).
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="gate.cancel"),
        # The body scrolls whatever has the focus (the choices, a field): PgDn / PgUp reach what
        # is below the fold.
        Binding("pagedown", "scroll_body(1)", "Scroll down", id="gate.page_down", show=False),
        Binding("pageup", "scroll_body(-1)", "Scroll up", id="gate.page_up", show=False),
    ]

    def action_scroll_body(self, direction: int) -> None:
        body = self.query_one("#gate-body", VerticalScroll)
        if direction > 0:
            body.scroll_page_down(animate=False)
        else:
            body.scroll_page_up(animate=False)

    def __init__(self, evidence: Evidence, blocked: list[Evidence]) -> None:
        super().__init__()
        self.evidence = evidence
        self.blocked = list(blocked)
        self.tried: str | None = None  # the answer last chosen and refused (Enter in the reason retries it)

    def compose(self) -> ComposeResult:
        ev = self.evidence
        with Vertical(id="gate", classes="form"):
            yield Label(Text(visible(ev.headline or ""), style="bold"), id="gate-title")
            with VerticalScroll(id="gate-body"):
                # The decision-relevant parts first (issue 32: at 80x24 and 120x40 the advice and
                # the valve warnings were below the fold): the warnings, the advice, what needs an
                # answer (each blocked fix's outcome), then the figures and Rule 3.
                if ev.warnings:
                    yield Static(
                        Text("\n").join(Text("⚠ " + visible(w)) for w in ev.warnings),
                        id="gate-warnings",
                    )
                if ev.advice:
                    lines = visible(ev.advice).splitlines()
                    advice = Text(lines[0], style="bold")
                    for line in lines[1:]:
                        advice.append("\n  " + line)
                    yield Static(advice, id="gate-advice")
                for n, b in enumerate(self.blocked):
                    yield Static(Text(f"Blocked fix {b.facts['item']}", style="bold"), classes="gate-blocked-label")
                    yield Static(figures_text(b), id=f"blocked-figures-{n}", classes="gate-blocked-figures")
                    with RadioSet(id=f"blocked-{n}", classes="gate-blocked"):
                        for k, a in enumerate(b.gate.answers):
                            yield RadioButton(Text(one_line(a.label)), value=(k == 0))
                yield Static(figures_text(ev), id="gate-figures")
                # Rule 3 of the iteration log: asked, prefilled from this round's fix reports.
                spent = ev.facts.get("rule3_from_reports") or {}
                yield Label(
                    "Rule 3, recorded with the round (none: none; empty: recorded as not given)", classes="form-label"
                )
                for field_id, key, hint in RULE3_INPUTS:
                    yield Input(
                        value=_prefill(spent.get(key)),
                        placeholder=hint,
                        id=field_id,
                        classes="gate-rule3",
                        compact=True,
                    )
            yield Label("Reason (recorded as decision_reason; Tab to type it)", classes="form-label")
            yield Input(placeholder="why continue or stop", id="gate-reason", compact=True)
            yield Static("", id="gate-error", classes="form-error")
            yield Choices(self._choices(), value=ev.default, id="gate-choices")
            fields = "the blocked fixes, Rule 3 and the reason" if self.blocked else "Rule 3 and the reason"
            keys = " · ".join(f"{c.key} {c.value}" for c in self._choices())
            yield Static(
                Text(f"{keys} · Enter records the marked choice · Tab: {fields} · PgDn more · esc cancels"),
                id="gate-hint",
                classes="form-hint",
            )

    def _choices(self) -> list[Choice]:
        """The round's two answers, with the gate's keys (a refused continue shown, not available)."""
        keys = {a.value: a.key for a in self.evidence.gate.answers}
        go_on = "Continue despite the warning" if self.evidence.gate.id == "safety-valve" else "Continue"
        return [
            Choice(
                "continue",
                keys["continue"],
                f"{go_on} ({keys['continue']})",
                "gate-continue",
                disabled="continue" in self.evidence.refused,
            ),
            Choice("stop", keys["stop"], f"Stop, go to Validation ({keys['stop']})", "gate-stop"),
        ]

    def on_mount(self) -> None:
        # The choices have the focus, so a and b mark as the choices say; Tab reaches the fields.
        self.query_one("#gate-choices", Choices).focus()

    def _first_field(self) -> Any:
        """The first thing a person fills in: a blocked fix's outcome, else Rule 3's first field."""
        if self.blocked:
            return self.query_one("#blocked-0", RadioSet)
        return self.query_one(f"#{RULE3_INPUTS[0][0]}", Input)

    def on_key(self, event: events.Key) -> None:
        """Tab from the choices goes where the hint says (the focus chain would go to the body's
        scroll first)."""
        if event.key == "tab" and isinstance(self.focused, Choices):
            event.stop()
            event.prevent_default()
            self._first_field().focus()

    def result(self, answer: str) -> dict[str, Any]:
        reason = self.query_one("#gate-reason", Input).value.strip() or None
        blocked = {}
        for n, b in enumerate(self.blocked):
            rs = self.query_one(f"#blocked-{n}", RadioSet)
            idx = rs.pressed_index if rs.pressed_index >= 0 else 0
            blocked[b.facts["item"]] = b.gate.answers[idx].value
        rule3_text = {key: self.query_one(f"#{field_id}", Input).value.strip() for field_id, key, _ in RULE3_INPUTS}
        return {"answer": answer, "reason": reason, "blocked": blocked, "rule3_text": rule3_text}

    def problem(self, res: dict[str, Any]) -> str | None:
        """Core's refusal of these answers (the reason the gate needs, a generic one, Rule 3 not
        given …), or None. Fills ``res["rule3"]`` with the round's Rule-3 fields."""
        try:
            validate_answer(self.evidence, res["answer"], res["reason"])
            for b in self.blocked:
                validate_answer(b, res["blocked"][b.facts["item"]], res["reason"])
            # An empty field is not given: the round records it as none and names it in
            # rule3_not_given (core's one rule, as for a flag or an answers file left out).
            given = res["rule3_text"]
            res["rule3"] = round_fields(
                budget_spent=given["budget_spent"] or None,
                # "; "-separated texts: round_fields strips them and drops the empty ones
                evidence_gained=given["evidence_gained"].split(";") if given["evidence_gained"] else None,
                residual_risk=given["residual_risk"].split(";") if given["residual_risk"] else None,
            )
        except DecisionRefused as exc:
            return str(exc)
        return None

    def choose(self, answer: str) -> None:
        if answer in self.evidence.refused:
            self._show_error(self.evidence.refused[answer])
            return
        res = self.result(answer)
        problem = self.problem(res)
        if problem:
            self.tried = answer
            self._show_error(problem + f" — type it, then Enter records {answer}")
            self.query_one("#gate-reason", Input).focus()
            return
        self.dismiss(res)

    def _show_error(self, message: str) -> None:
        error = self.query_one("#gate-error", Static)
        error.update(Text("✗ " + one_line(message, 300)))
        error.add_class("shown")

    def on_choices_picked(self, event: Choices.Picked) -> None:
        event.stop()
        self.choose(event.value)

    def on_choices_unavailable(self, event: Choices.Unavailable) -> None:
        event.stop()
        self._show_error(self.evidence.refused.get(event.value) or f"{event.value} is not available here")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.tried is not None:
            self.choose(self.tried)
            return
        self.query_one("#gate-choices", Choices).focus()  # Enter there records the marked choice

    def action_cancel(self) -> None:
        self.dismiss(None)
