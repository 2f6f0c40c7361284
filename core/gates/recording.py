"""Answering a gate: read its evidence (:func:`gather`), check and record an answer
(:func:`apply_answer`, :func:`record`), or replay a whole answers file (:func:`replay_answers_file`).

Each loop's module (``scars.core.gates.samsara``, ``loopspec``, ``review``, ``bkit``) reads the
loop's files and writes the answer: one ``auto-decisions.md`` entry in the exact §1.6 format
(through ``FeatureSession.append_auto_decision`` for samsara, through the same formatter for the
other loops' state directories) plus the loop's own state. Pure core: no terminal library is
imported here; errors are the typed ones of ``scars.core.errors`` and the CLI maps them to exit codes.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from scars.core.clock import now_iso
from scars.core.errors import DecisionRefused, FieldError
from scars.core.gates import samsara as samsara_gate
from scars.core.gates.answers import load_answers
from scars.core.gates.bkit import apply_pdca, gather_pdca
from scars.core.gates.catalog import GATES, get_gate
from scars.core.gates.evidence import Evidence, GateResult, validate_answer
from scars.core.gates.loopspec import apply_loop_spec, gather_loop_spec
from scars.core.gates.review import apply_review, gather_review
from scars.core.samsara.session import FeatureSession


def gather(gate_id: str, path: str | os.PathLike | None = None, **options: Any) -> Evidence:
    """Read the loop's files for ``gate_id`` at ``path`` (default: the current directory)."""
    gate = get_gate(gate_id)

    return GATHER[gate.loop](gate, Path(path) if path is not None else Path.cwd(), **options)


def apply_answer(
    evidence: Evidence,
    answer_text: str,
    reason: str | None = None,
    *,
    user: str,
    session: FeatureSession | None = None,
    source: str = "terminal",
    now: str | None = None,
) -> GateResult:
    """Validate and record an answer; return what was recorded.

    ``source`` says where the answer came from (terminal, flag, environment, answers file) and
    goes into the entry's evidence. For samsara, ``session`` is an open, writable
    ``FeatureSession``; the other loops lock their state directory themselves.
    """
    ans, reason = validate_answer(evidence, answer_text, reason)

    return APPLY[evidence.gate.loop](
        evidence, ans, reason, user=user, session=session, source=source, now=now or now_iso()
    )


def record(
    evidence: Evidence, answer_text: str, reason: str | None = None, *, user: str, source: str = "terminal"
) -> GateResult:
    """Record an answer: samsara gates under the feature's writer session, others directly."""
    if evidence.gate.loop == "samsara":
        return samsara_gate.record(evidence, answer_text, reason, user=user, source=source)
    return apply_answer(evidence, answer_text, reason, user=user, source=source)


def record_triage(evidence: Evidence, *, user: str, source: str) -> GateResult | None:
    """The `triage` gate's entry after the app has recorded the item decisions (None: none made)."""

    return samsara_gate.record_triage(evidence, user=user, source=source)


def replay_answers_file(
    named_gate: str,
    path: str | os.PathLike,
    answers_path: str | os.PathLike,
    *,
    user: str,
    options: dict[str, Any] | None = None,
) -> list[GateResult]:
    """Validate every entry of an answers file, then record them all (or nothing)."""
    gate = get_gate(named_gate)
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
    source = f"answers file {Path(answers_path).name}"
    if gate.loop == "samsara":
        return samsara_gate.replay(path, af, user=user, options=options, source=source)
    evidences = []
    for gid, entries in af.gates.items():
        if len(entries) != 1:
            errors.append(f"{gid}: one answer expected, {len(entries)} given")
            continue
        e = entries[0]
        ev = gather(gid, path, **options)
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


# One gather / apply per loop (the loop of each gate is in the catalog).
GATHER = {"loop-spec": gather_loop_spec, "aris": gather_review, "bkit": gather_pdca, "samsara": samsara_gate.gather}
APPLY = {"loop-spec": apply_loop_spec, "aris": apply_review, "bkit": apply_pdca, "samsara": samsara_gate.apply}
