"""The gate of a loop other than samsara, opened from the Loops inbox (enter).

Renders the Evidence core computes for ``scars gate <gate> PATH`` — the loop's own prompt, the
figures, the warnings, the advice beside the choice (never instead of it) — with the gate's
answers (a refused one shown with why, and not selectable), a reason and, for `sprint-pause`,
the value an answer needs. A gate request (`scars gate … --wait`) opens here too, with who asks
and, when the loop's files changed since it was posted, a note over the gate as it reads now.
Answers are checked with core's ``validate_answer`` before the screen
returns them; the Loops screen records them through the gates' one record path
(``scars.core.gates.record``). Loop texts are untrusted: every one is made inert.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static

from scars.core.errors import DecisionRefused, ReadOnly, read_only_note, refuse_if_read_only
from scars.core.gatekit.evidence import LOOK_ONLY_PROMPT_LABEL, PROMPT_LABEL, Evidence, validate_answer
from scars.core.sanitize import one_line, visible
from scars.tui.app.screens import DIALOGS_CSS
from scars.tui.app.screens.gate import figures_text

# Answers that take a number (`scars gate … --value N`).
VALUE_ANSWERS = {"increase-budget": "the new budget (tokens)", "extend-timeout": "the new phase timeout (hours)"}


class LoopGate(ModalScreen[dict | None]):
    """Returns {answer, reason, value} or None (cancelled)."""

    CSS_PATH = DIALOGS_CSS

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="loopgate.cancel")]

    def __init__(
        self, evidence: Evidence, *, asked: str | None = None, note: str | None = None, read_only: str | None = None
    ) -> None:
        super().__init__()
        self.read_only = read_only  # why this session records nothing: the gate is shown, not answered
        self.evidence = evidence
        self.answers = list(evidence.gate.answers)
        self.asked = asked  # a gate request: who asks, since when (shown under the title)
        self.note = note  # e.g. the loop's files changed since the request was posted

    def compose(self) -> ComposeResult:
        ev = self.evidence
        with Vertical(id="gate", classes="form"):
            yield Label(Text(one_line(ev.gate.title, 90), style="bold"), id="gate-title")
            if self.asked:
                yield Static(Text(one_line(self.asked, 200)), id="gate-asked")
            if self.read_only:  # every part of answering is shown disabled; this line says why
                yield Static(
                    Text(
                        one_line(
                            read_only_note(self.read_only, "look only, this gate's answer is not recorded here"), 200
                        )
                    ),
                    id="gate-read-only",
                )
            with VerticalScroll(id="gate-body"):
                if self.note:
                    yield Static(Text("⚠ " + visible(self.note), style="bold"), id="gate-note")
                yield Label(LOOK_ONLY_PROMPT_LABEL if self.read_only else PROMPT_LABEL, classes="form-label")
                yield Static(Text(visible(ev.workflow_prompt)), id="gate-prompt")
                yield Static(figures_text(ev), id="gate-figures")
                if ev.warnings:
                    yield Static(Text("\n").join(Text("⚠ " + visible(w)) for w in ev.warnings), id="gate-warnings")
                if ev.advice:
                    yield Static(Text(visible(ev.advice), style="bold"), id="gate-advice")
                for a in self.answers:
                    if a.value in ev.refused:
                        yield Static(Text(one_line(f"✗ {a.label}: {ev.refused[a.value]}", 300)), classes="gate-refused")
            yield Label("Answers" if self.read_only else "Answer", classes="form-label")
            with RadioSet(id="gate-answers", disabled=self.read_only is not None):
                default = ev.default if ev.default not in ev.refused else None
                for a in self.answers:
                    refused = a.value in ev.refused
                    label = f"({a.key}) {a.label}" + (" — refused" if refused else "")
                    yield RadioButton(
                        Text(one_line(label, 80)), value=(a.value == default), disabled=refused, id=f"ans-{a.value}"
                    )
            off = self.read_only is not None
            yield Label("Reason" if off else "Reason (recorded with the answer)", classes="form-label")
            yield Input(
                placeholder="" if off else "why this answer, in the loop's terms",
                id="gate-reason",
                compact=True,
                disabled=off,
            )
            if any(a.value in VALUE_ANSWERS for a in self.answers):
                yield Label("Value (increase budget / extend timeout)", classes="form-label")
                yield Input(placeholder="a number", id="gate-value", compact=True, disabled=off)
            yield Static("", id="gate-error", classes="form-error")
            with Horizontal(id="form-buttons"):
                yield Button("Record", id="gate-record", variant="primary", compact=True, disabled=off)
                yield Button("Close" if off else "Cancel", id="gate-cancel", compact=True)

    def on_mount(self) -> None:
        first = "#gate-cancel" if self.read_only else "#gate-answers"  # what can be used: looking, leaving
        self.query_one(first).focus()

    def chosen(self) -> str | None:
        rs = self.query_one("#gate-answers", RadioSet)
        button = rs.pressed_button
        return str(button.id).removeprefix("ans-") if button is not None and button.id else None

    def result(self) -> dict[str, Any]:
        reason = self.query_one("#gate-reason", Input).value.strip() or None
        value = None
        if self.query("#gate-value"):
            value = self.query_one("#gate-value", Input).value.strip() or None
        return {"answer": self.chosen(), "reason": reason, "value": value}

    def problem(self, res: dict[str, Any]) -> str | None:
        """Core's refusal of this answer (a reason it needs, a generic one, a refused answer …)."""
        if res["answer"] in VALUE_ANSWERS and res["value"] is None:
            return f"{res['answer']} needs {VALUE_ANSWERS[res['answer']]} in Value"
        try:
            validate_answer(self.evidence, res["answer"], res["reason"])
        except DecisionRefused as exc:
            return str(exc)
        return None

    def record(self) -> None:
        res = self.result()
        problem = self.problem(res)
        try:
            refuse_if_read_only(self.read_only, "this gate's answer is not recorded")
        except ReadOnly as exc:
            problem = str(exc)
        if problem:
            error = self.query_one("#gate-error", Static)
            error.update(Text("✗ " + one_line(problem, 200)))
            error.add_class("shown")
            return
        self.dismiss(res)

    def on_key(self, event: Any) -> None:
        """An answer's letter picks it (the keys `scars gate` takes) while the answers have the
        focus; it records nothing (Record, or Enter in a field, does). In a text field the letters
        type; on a button they do nothing (issue 27); read-only: nothing can be answered here."""
        if self.read_only or not isinstance(self.focused, RadioSet) or not event.character:
            return
        answer = next((a for a in self.answers if a.key == event.character), None)
        if answer is not None and answer.value not in self.evidence.refused:
            self.query_one(f"#ans-{answer.value}", RadioButton).value = True
            event.stop()

    def action_cancel(self) -> None:
        self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "gate-record":
            self.record()
        else:
            self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.record()
