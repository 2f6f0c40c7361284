"""Terminal side of `scars gate`: the evidence printed with rich, the question with questionary.

Every untrusted string (file contents, figures read from the loop's files) goes through
``scars.core.sanitize`` and is rendered as ``Text`` — never as markup. Imported only after the
TTY check of ``scars gate`` (questionary and prompt_toolkit are never touched without a terminal).
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from scars.core.errors import DecisionRefused
from scars.core.gatekit.evidence import PROMPT_LABEL, Evidence
from scars.core.sanitize import one_line, visible
from scars.core.text import text_problem
from scars.tui.cli.render.console import make_console


def _fit(text: str, cells: int) -> str:
    """One inert line of at most ``cells`` terminal cells (wide CJK characters count two)."""
    from rich.cells import cell_len, set_cell_size

    line = one_line(text)
    if cell_len(line) <= cells:
        return line
    return set_cell_size(line, max(cells - 1, 1)).rstrip() + "…"


def render_evidence(console: Console, evidence: Evidence) -> None:
    gate = evidence.gate
    console.print(Text(f"scars gate {gate.id} — {gate.title}", style="bold"))
    console.print(Text(f"loop: {evidence.loop_name()}   from: {gate.source}", style="dim"))
    console.print()
    if evidence.headline:
        console.print(Text(visible(evidence.headline), style="bold"))
        console.print()
    console.print(Text(PROMPT_LABEL, style="bold"))
    console.print(Text(visible(evidence.workflow_prompt)))
    console.print()
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    for label, value in evidence.figures:
        table.add_row(Text(one_line(label)), Text(visible(str(value))))
    console.print(table)
    for w in evidence.warnings:
        console.print(Text("! warning: ", style="bold yellow") + Text(visible(w)))
    if evidence.advice:
        console.print(
            Text("advice: ", style="bold")
            + Text(visible(evidence.advice))
            + Text("  (your answer decides)", style="dim")
        )
    if evidence.files_read:
        console.print(Text("read: ", style="dim") + Text(one_line(", ".join(evidence.files_read)), style="dim"))
    console.print()


def ask(evidence: Evidence, *, input: Any = None, output: Any = None) -> tuple[str, str | None]:
    """Ask for the answer (arrow keys or the choice's single key, then Enter) and, where the
    record needs one, a question-specific reason (generic answers are refused and asked again).

    Raises KeyboardInterrupt when the user interrupts (Ctrl-C / Ctrl-D): nothing is recorded.
    """
    import questionary
    from questionary import Choice

    kw: dict[str, Any] = {}
    if input is not None:
        kw["input"] = input
    if output is not None:
        kw["output"] = output

    gate = evidence.gate
    # The answers with what each one does, wrapped (a choice line is cut at the terminal's width).
    console = make_console()
    for a in gate.answers:
        refused = evidence.refused.get(a.value)
        line = Text(f"  {a.key}  ", style="bold") + Text(one_line(a.plain_label), style="bold")
        line += Text(f" — {one_line(refused)}" if refused else f" — {one_line(a.consequence)}")
        console.print(line)
    choices = []
    for a in gate.answers:
        refused = evidence.refused.get(a.value)
        choices.append(
            Choice(
                title=one_line(a.plain_label),
                value=a.value,
                shortcut_key=a.key,
                disabled=_fit(refused, 40) if refused else None,
            )
        )
    default = evidence.default if evidence.default not in evidence.refused else None
    default_choice = next((c for c in choices if c.value == default), None)
    value = questionary.select(
        "Answer:",
        choices=choices,
        default=default_choice,
        use_shortcuts=True,
        use_arrow_keys=True,
        use_jk_keys=False,
        show_selected=False,
        instruction="(arrows or letter, then Enter)",
        **kw,
    ).unsafe_ask(patch_stdout=False)
    if value is None:
        raise KeyboardInterrupt
    answer = gate.answer(value)
    assert answer is not None
    reason = None
    if evidence.needs_reason(answer):
        reason = ask_reason(gate, answer.value, console, **kw)
    return answer.value, reason


def ask_reason(gate: Any, answer: str, console: Console, **kw: Any) -> str:
    """A question-specific reason, asked until it says something. A refused text is not kept in
    the field: the next try starts empty (typing on would append to the refused "ok")."""
    import questionary

    while True:
        reason = questionary.text(f"Why {answer}? (recorded verbatim)", **kw).unsafe_ask(patch_stdout=False)
        if reason is None:
            raise KeyboardInterrupt
        reason = reason.strip()
        problem = text_problem(reason, question=gate)
        if problem is None:
            return reason
        console.print(Text("✗ " + one_line(problem, 300) + " — type the reason again", style="bold"))


RULE3_QUESTIONS = {
    "budget_spent": "Budget spent (NAME=COUNT,…; e.g. implementer_dispatches=1,validation_runs=2; none; empty: not given)",
    "evidence_gained": "Evidence gained (texts separated by ';'; none; empty: not given)",
    "residual_risk": "Residual risk left (texts separated by ';'; none; empty: not given)",
}


def ask_rule3(missing: list[str], **kw: Any) -> dict[str, Any]:
    """Rule 3 of the iteration log, asked for the fields the round's fix reports do not give:
    each answered, said to be none, or left empty (not given: the round records none and names it
    in rule3_not_given). Asked again until the value is usable."""
    # lazy: questionary and the samsara gates' module, loaded when a round is recorded at a terminal
    import questionary

    from scars.core.gates import round_fields

    console = make_console()
    out: dict[str, Any] = {}
    for key in missing:
        while True:
            text = questionary.text(RULE3_QUESTIONS[key], **kw).unsafe_ask(patch_stdout=False)
            if text is None:
                raise KeyboardInterrupt
            text = text.strip()
            if not text:  # not given: the round records none and names it in rule3_not_given
                break
            value: Any = text if key == "budget_spent" else text.split(";")  # round_fields strips, drops empties
            try:
                out.update(round_fields(**{key: value}))
                break
            except DecisionRefused as exc:  # the refusal is shown and asked again
                console.print(Text("✗ " + one_line(str(exc), 300), style="bold"))
    return out
