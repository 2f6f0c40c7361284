"""What a gate is, as data: :class:`Gate` and :class:`Answer`, and the answer commands said of one.

A :class:`Gate` names one decision point of an upstream loop: its id on the command line, the
ONE gate-id its auto-decisions.md entries carry (``entry_id``, the heading's
``<stage>.<entry_id>``; formats.md §1.6 leaves the id free, so consistency is ours to keep),
the loop, the workflow prompt as the upstream loop words it, the valid answers (each with a
single key), which answers need a free-text reason, and how each answer maps to the
auto-decisions decision (proceed / revise / reject / accept_gap). Each loop's folder lists its
own (``core/loops/<name>/catalog.py``, ``POINTS``); the registry gathers them into ``GATES`` (the
gates ``scars gate`` answers, by command-line id) and ``DECISION_POINTS`` (every decision point
scars writes an entry for, by entry id, the watch reopen included) with :func:`index`.
``env_var`` names the environment variables that answer a gate without a terminal.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Literal

from scars.core.records import record
from scars.core.sanitize import shell_word
from scars.core.settings import env_var

GateDecision = Literal["proceed", "revise", "reject", "accept_gap"]


DECISIONS: tuple[str, ...] = ("proceed", "revise", "reject", "accept_gap")


_LETTER_MARKER = re.compile(r"\(\w\)\s+")


@record(slots=True)
class Answer:
    """One valid answer of a gate."""

    value: str  # machine value, e.g. "continue"
    key: str  # the single key that picks it at the terminal (also accepted as --answer)
    label: str  # the option as the upstream loop words it
    decision: GateDecision  # the auto-decisions decision it maps to
    needs_reason: bool  # a free-text, question-specific reason is required
    consequence: str  # what the loop does next (the entry's `consequences`)
    aliases: tuple[str, ...] = ()  # other accepted spellings (upstream letters, words)

    @property
    def plain_label(self) -> str:
        """The label without upstream's leading letter marker: "(A) enter iteration" -> "enter iteration"
        (a terminal shows the choice's key itself; "a) (A) enter …" says it twice)."""
        m = _LETTER_MARKER.match(self.label)
        return self.label[m.end() :] if m else self.label


@record(slots=True)
class Gate:
    """One human gate of an upstream loop."""

    id: str  # the gate id on the command line and in `SCARS_ANSWER_<GATE>`
    entry_id: str  # the gate-id of its auto-decisions.md entries (`## Decision NNN - <stage>.<entry_id>`)
    loop: str  # samsara | loop-spec | aris | bkit | dag
    title: str
    stage: str  # auto-decisions `stage`; the heading is `<stage>.<id>`
    prompt_type: Literal["question", "confirmation"]
    answers: tuple[Answer, ...]
    principle: str  # the upstream rule the gate enforces (the entry's `principles_used`)
    source: str  # where upstream words the prompt (shown in help and docs)
    prompt: str = ""  # the workflow prompt as the loop words it; {placeholders} take the figures
    needs_item: bool = False  # the gate is about one scar item (`--item ID`)
    # What else than its loop's files the gate is about — the item of blocked-fix (`--item`), the
    # feature of bkit's feature gates (`--bkit-feature`), the sprint of sprint-pause (its file):
    # each a key of its evidence's context (``evidence.selector``). The other gates are about their
    # whole state file (loop-spec's feature.json, ARIS's REVIEW_STATE.json — a review gate answers
    # for every claim at once —, a DAG report).
    selects: tuple[str, ...] = ()
    cli: bool = True  # answered by `scars gate` (False: a decision scars itself takes)

    def answer(self, text: str) -> Answer | None:
        """The answer ``text`` names (value, key, alias or label; case-insensitive), or None."""
        t = " ".join(str(text).split()).casefold()
        if not t:
            return None
        for a in self.answers:
            names = {a.value, a.key, a.label, *a.aliases}
            if t in {n.casefold() for n in names}:
                return a
        return None

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(a.value for a in self.answers)

    def valid_answers_text(self) -> str:
        return ", ".join(f"{a.value} ({a.key})" for a in self.answers)


def answer_of(value, key, label, decision, needs_reason, consequence, *aliases) -> Answer:
    """An :class:`Answer` as a loop's catalog writes it (its other spellings last)."""
    return Answer(value, key, label, decision, needs_reason, consequence, tuple(aliases))


def index(points: Iterable[Gate]) -> tuple[dict[str, Gate], dict[str, Gate]]:
    """(the gates ``scars gate`` answers, by command-line id; every decision point scars writes an
    entry for, by entry id) of ``points``: every loop's, in the registry's order. Two points that
    write one entry id, or two gates with one command-line id, are refused."""
    gates: dict[str, Gate] = {}
    points_by_entry: dict[str, Gate] = {}
    for gate in points:
        if gate.entry_id in points_by_entry:
            raise ValueError(f"two gates write the entry id {gate.entry_id!r}")
        points_by_entry[gate.entry_id] = gate
        if gate.cli:
            if gate.id in gates:
                raise ValueError(f"two gates are named {gate.id!r}")
            gates[gate.id] = gate
    return gates, points_by_entry


def answers_hint(gate: Gate, path: str | None, item: str | None = None) -> str:
    """The exact command that answers ``gate`` without a terminal (for exit 3); ``item``: the
    item a blocked-fix gate was asked about (else the ITEM_ID placeholder)."""
    where = f" {shell_word(path)}" if path else ""
    if gate.id == "triage":
        return f"scars gate triage{where} --answers ANSWERS.yaml"
    needs = [a for a in gate.answers if a.needs_reason]
    a = gate.answers[0]
    item = f" --item {shell_word(item) if item else 'ITEM_ID'}" if gate.needs_item else ""
    reason = ' --reason "WHY"' if a.needs_reason else ""
    cmd = f"scars gate {gate.id}{where}{item} --answer {a.value}{reason}"
    return cmd + hint_tail(gate, gate.values, [x.value for x in needs])


def hint_tail(gate: Gate, answers: Sequence[str], need_reason: Sequence[str], refused: Sequence[str] = ()) -> str:
    """The parenthesis after an answer command: the answers, which need a reason, which are
    refused here, and the gate's environment variable."""
    extra = f" (answers: {', '.join(answers)}"
    if need_reason:
        extra += f"; --reason needed for {', '.join(need_reason)}"
    if refused:
        extra += f"; refused here: {', '.join(refused)}"
    return extra + f"; or set {env_var(gate.id)})"
