"""The one record path of every gate, whatever front end took the answer: read its evidence
(:func:`gather`), check and record an answer (:func:`apply_answer`, :func:`record`), replay a
whole answers file (:func:`replay_answers_file`).

Each gate's loop system (``scars.core.loops.registry``: the gate's ``loop`` names it) reads the
loop's files and writes the answer into the loop's own state, plus its auto-decisions.md entry
(built by ``evidence.build_entry``): samsara's in auto mode or with ``auto_entry=True`` (one per
decision point), the other loops' always, next to their state file. Only the gate's own loop
system is imported. Pure core: no terminal library is imported here; errors are the typed ones
of ``scars.core.errors`` and the CLI maps them to exit codes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.errors import refuse_if_read_only
from scars.core.gatekit.answers import load_answers
from scars.core.gatekit.evidence import Evidence, GateResult, validate_answer
from scars.core.loops.registry import GATES, get_gate, loop_system
from scars.core.loops.system import refused
from scars.core.provenance import Provenance, provenance


def gather(
    gate_id: str, path: str | os.PathLike | None = None, *, read_only: str | bool | None = None, **options: Any
) -> Evidence:
    """Read the loop's files for ``gate_id`` at ``path`` (default: the current directory).

    A record of this loop that a kill interrupted (its intent file, ``storage.intent``) is
    completed first and the files are read again, so the evidence a person answers is the loop's
    state with every recorded answer in it; its warnings say so (or why it is still pending).
    ``read_only`` (a read-only session): nothing is completed, the files are read as they are."""
    gate = get_gate(gate_id)
    where = Path(path) if path is not None else Path.cwd()
    return loop_system(gate.loop).gather(gate, where, read_only=read_only, **options)


def _what(evidence: Evidence) -> str:
    return f"the {evidence.gate.id} gate's answer ({evidence.gate.loop}) is not recorded"


def human_mode(evidence: Evidence) -> bool:
    """Whether a person, not the loop's gatekeeper, answers this gate: a samsara feature unless its
    pre-thinking.md says ``Execution mode: auto`` (its FeatureSession applies the rule); loop-spec
    unless the feature runs autonomous (``autonomous: true`` or ``execStyle: auto``); the other
    loops' gates are the loop asking a person (none of them has an auto mode scars can read)."""
    return loop_system(evidence.gate.loop).human_mode(evidence)


def apply_answer(
    evidence: Evidence,
    answer_text: str,
    reason: str | None = None,
    *,
    user: str,
    session: Any = None,
    source: Provenance | str = "terminal",
    now: str | None = None,
    auto_entry: bool | None = None,
    read_only: str | bool | None = None,
) -> GateResult:
    """Validate and record an answer; return what was recorded.

    ``read_only``: the caller's session is read-only (its reason): refused, nothing written.

    ``source`` says where the answer came from: its :class:`~scars.core.provenance.Provenance`
    (channel, terminal, agent session), kept with the record; a bare label is read by
    ``provenance.as_provenance``. In human mode an agent's answer without a terminal is refused
    (AgentAnswerRefused) or, where allowed, recorded as the agent's. For samsara, ``session`` is an
    open, writable ``FeatureSession`` and ``auto_entry`` overrides
    the feature's execution mode (None: auto mode writes the entries, human mode none); the
    other loops lock their state directory themselves.
    """
    system = loop_system(evidence.gate.loop)
    refuse_if_read_only(read_only, _what(evidence))
    system.entry_option(auto_entry)
    ans, reason = validate_answer(evidence, answer_text, reason)
    return system.apply(
        evidence, ans, reason, user=user, session=session, source=source, now=now, auto_entry=auto_entry
    )


def record(
    evidence: Evidence,
    answer_text: str,
    reason: str | None = None,
    *,
    user: str,
    source: Provenance | str = "terminal",
    session: Any = None,
    auto_entry: bool | None = None,
    round_fields: dict[str, Any] | None = None,
    read_only: str | bool | None = None,
) -> GateResult:
    """Record an answer: samsara gates under the feature's writer session (``session``, or one
    opened for this answer), the other loops' directly. ``round_fields``: a samsara round gate's
    Rule-3 fields (``scars.core.loops.samsara.rule3.round_fields``). ``read_only``: the caller's
    session is read-only (its reason): refused, nothing written."""
    system = loop_system(evidence.gate.loop)
    refuse_if_read_only(read_only, _what(evidence))
    system.entry_option(auto_entry)
    return system.record(
        evidence,
        answer_text,
        reason,
        user=user,
        source=source,
        session=session,
        auto_entry=auto_entry,
        round_fields=round_fields,
    )


def proof_file(evidence: Evidence) -> Path | None:
    """The file whose change proves that :func:`record` wrote this gate's answer: the
    auto-decisions.md that the other loops' record appends FIRST, in one write, before it
    touches anything else. One entry more: the answer is recorded — its whole record is on disk,
    or, when a kill interrupted it, its intent file is, and the next taker of the directory's
    lock (the next record there, or the next :func:`gather` of one of its gates) completes it
    before anything else reads or writes there (``scars.core.storage.intent``). Unchanged: no
    write of the answer reached the loop's files — unless its intent file was written, when the
    next :func:`gather` or record completes it (entry included); so a reader deciding whether
    an interrupted record happened gathers first, then looks. None for samsara, whose record
    writes its entry only in auto mode."""
    return loop_system(evidence.gate.loop).proof_file(evidence)


def replay_answers_file(
    named_gate: str,
    path: str | os.PathLike,
    answers_path: str | os.PathLike,
    *,
    user: str,
    options: dict[str, Any] | None = None,
    auto_entry: bool | None = None,
    tty: bool = False,
) -> list[GateResult]:
    """Validate every entry of an answers file, then record them all (or nothing). ``tty``: a
    person is at the terminal that replays it (the answers' provenance says so)."""
    gate = get_gate(named_gate)
    system = loop_system(gate.loop)
    system.entry_option(auto_entry)
    af = load_answers(answers_path, GATES)
    options = {k: v for k, v in (options or {}).items() if v is not None}
    errors: list[str] = []
    for gid in af.gates:
        if GATES[gid].loop != gate.loop:
            errors.append(f"{gid}: a {GATES[gid].loop} gate, not one of {gate.loop}")
    if af.items and not system.item_decisions:
        errors.append(f"item decisions ({len(af.items)}) only apply to samsara features")
    if named_gate not in af.gates and not (named_gate == "triage" and af.items):
        errors.append(f"the answers file has no answer for gate {named_gate}")
    if errors:
        raise refused(af.source, errors)
    source = provenance("answers-file", tty=tty, via=f"answers file {Path(answers_path).name}")
    return system.replay(path, af, user=user, options=options, source=source, auto_entry=auto_entry)
