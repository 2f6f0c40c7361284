"""The one record path of every gate, whatever front end took the answer: read its evidence
(:func:`gather`), check and record an answer (:func:`apply_answer`, :func:`record`), replay a
whole answers file (:func:`replay_answers_file`).

Each loop's module (``scars.core.loops.samsara.gates``, ``loopspec``, ``review``, ``bkit``) reads the
loop's files and writes the answer into the loop's own state, plus its auto-decisions.md entry
(built by ``evidence.build_entry``): samsara's in auto mode or with ``auto_entry=True`` (one per
decision point), the other loops' always, next to their state file. Pure core: no terminal
library is imported here; errors are the typed ones of ``scars.core.errors`` and the CLI maps
them to exit codes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError, UsageError, refuse_if_read_only
from scars.core.gatekit.answers import load_answers
from scars.core.gatekit.catalog import GATES, get_gate
from scars.core.gatekit.evidence import Evidence, GateResult, validate_answer
from scars.core.gatekit.state_io import complete_interrupted
from scars.core.loops.bkit.gates import apply_pdca, gather_pdca
from scars.core.loops.dag.gates import apply_dag, gather_dag
from scars.core.loops.loopspec.gates import apply_loop_spec, gather_loop_spec
from scars.core.loops.review.gates import apply_review, gather_review
from scars.core.loops.samsara import gates as samsara_gate
from scars.core.provenance import Provenance, as_provenance, decided_by, provenance
from scars.core.samsara.session import FeatureSession


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
    evidence = GATHER[gate.loop](gate, where, **options)
    if gate.loop != "samsara" and not read_only:
        settled = complete_interrupted(Path(evidence.context["decisions_dir"]), evidence.context.get("root"))
        if settled is not None:
            completed, note = settled
            if completed:
                evidence = GATHER[gate.loop](gate, where, **options)
            evidence.warnings.append(note)
    return evidence


def _what(evidence: Evidence) -> str:
    return f"the {evidence.gate.id} gate's answer ({evidence.gate.loop}) is not recorded"


def _entry_option(gate_loop: str, auto_entry: bool | None) -> None:
    if auto_entry is not None and gate_loop != "samsara":
        raise UsageError(
            "--auto-entry / --no-auto-entry apply to samsara gates (the other loops' gates always write their entry)"
        )


def human_mode(evidence: Evidence) -> bool:
    """Whether a person, not the loop's gatekeeper, answers this gate: a samsara feature unless its
    pre-thinking.md says ``Execution mode: auto`` (its FeatureSession applies the rule); loop-spec
    unless the feature runs autonomous (``autonomous: true`` or ``execStyle: auto``); the other
    loops' gates are the loop asking a person (none of them has an auto mode scars can read)."""
    if evidence.gate.loop == "samsara":
        return not evidence.context.get("auto_mode")
    if evidence.gate.loop == "loop-spec":
        data = evidence.context.get("data")
        if isinstance(data, dict) and (data.get("autonomous") is True or data.get("execStyle") == "auto"):
            return False
    return True


def apply_answer(
    evidence: Evidence,
    answer_text: str,
    reason: str | None = None,
    *,
    user: str,
    session: FeatureSession | None = None,
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
    gate = evidence.gate
    refuse_if_read_only(read_only, _what(evidence))
    _entry_option(gate.loop, auto_entry)
    ans, reason = validate_answer(evidence, answer_text, reason)
    if gate.loop == "samsara":
        return samsara_gate.apply(
            evidence, ans, reason, user=user, session=session, source=source, auto_entry=auto_entry
        )
    prov = as_provenance(source)
    user = decided_by(user, prov, human_mode=human_mode(evidence))  # refused before anything is written
    evidence.context["provenance"] = prov  # build_entry says it in the entry
    label = prov.via or prov.channel
    result = APPLY[gate.loop](evidence, ans, reason, user=user, source=label, now=now or now_iso())
    result.source = label
    result.extra["provenance"] = prov.to_record()
    return result


def record(
    evidence: Evidence,
    answer_text: str,
    reason: str | None = None,
    *,
    user: str,
    source: Provenance | str = "terminal",
    session: FeatureSession | None = None,
    auto_entry: bool | None = None,
    round_fields: dict[str, Any] | None = None,
    read_only: str | bool | None = None,
) -> GateResult:
    """Record an answer: samsara gates under the feature's writer session (``session``, or one
    opened for this answer), the other loops' directly. ``round_fields``: a samsara round gate's
    Rule-3 fields (``scars.core.loops.samsara.gates.round_fields``). ``read_only``: the caller's session
    is read-only (its reason): refused, nothing written."""
    refuse_if_read_only(read_only, _what(evidence))
    _entry_option(evidence.gate.loop, auto_entry)
    if evidence.gate.loop == "samsara":
        return samsara_gate.record(
            evidence,
            answer_text,
            reason,
            user=user,
            source=source,
            session=session,
            auto_entry=auto_entry,
            round_fields=round_fields,
        )
    if round_fields:
        raise UsageError("budget_spent / evidence_gained / residual_risk belong to a samsara round gate")
    return apply_answer(evidence, answer_text, reason, user=user, source=source)


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
    if evidence.gate.loop == "samsara":
        return None
    return Path(evidence.context["decisions_dir"]) / "auto-decisions.md"


def record_triage(
    evidence: Evidence, *, user: str, source: Provenance | str, auto_entry: bool | None = None
) -> GateResult | None:
    """The `triage` gate after the app has recorded the item decisions (None: none made)."""
    return samsara_gate.record_triage(evidence, user=user, source=source, auto_entry=auto_entry)


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
    _entry_option(gate.loop, auto_entry)
    af = load_answers(answers_path)
    options = {k: v for k, v in (options or {}).items() if v is not None}
    errors: list[str] = []
    for gid in af.gates:
        if GATES[gid].loop != gate.loop:
            errors.append(f"{gid}: a {GATES[gid].loop} gate, not one of {gate.loop}")
    if af.items and gate.loop != "samsara":
        errors.append(f"item decisions ({len(af.items)}) only apply to samsara features")
    if named_gate not in af.gates and not (named_gate == "triage" and af.items):
        errors.append(f"the answers file has no answer for gate {named_gate}")
    if errors:
        raise DecisionRefused(
            f"{af.source}: nothing was recorded:\n  " + "\n  ".join(errors), [FieldError("answers", e) for e in errors]
        )
    source = provenance("answers-file", tty=tty, via=f"answers file {Path(answers_path).name}")
    if gate.loop == "samsara":
        return samsara_gate.replay(path, af, user=user, options=options, source=source, auto_entry=auto_entry)
    evidences = []
    for gid, entries in af.gates.items():
        if len(entries) != 1:
            errors.append(f"{gid}: one answer expected, {len(entries)} given")
            continue
        e = entries[0]
        # An entry's own `value` (sprint-pause: the new budget or timeout) is a gather option too.
        ev = gather(gid, path, **(options | ({"value": str(e["value"])} if e.get("value") is not None else {})))
        try:
            validate_answer(ev, e.get("answer"), e.get("reason"))
        except DecisionRefused as exc:
            errors.append(str(exc))
        evidences.append((ev, e))
    if errors:
        raise DecisionRefused(
            f"{af.source}: nothing was recorded:\n  " + "\n  ".join(errors), [FieldError("answers", e) for e in errors]
        )
    return [apply_answer(ev, e["answer"], e.get("reason"), user=user, source=source) for ev, e in evidences]


# One gather per loop, one apply per other loop (the loop of each gate is in the catalog).
GATHER = {
    "loop-spec": gather_loop_spec,
    "aris": gather_review,
    "bkit": gather_pdca,
    "dag": gather_dag,
    "samsara": samsara_gate.gather,
}
APPLY = {"loop-spec": apply_loop_spec, "aris": apply_review, "bkit": apply_pdca, "dag": apply_dag}
