"""samsara's gates recorded: entry, triage, round-continue, safety-valve, blocked-fix.

Every front end — the app's round gate, ``scars gate``, answers files, ``scars round close``,
``scars decide --blocked`` — records through :func:`apply` / :func:`close_round` under the
feature's writer lock: the loop's own state first, then, in auto mode (``Execution mode: auto``)
or with ``--auto-entry``, one auto-decisions.md entry per decision point, built by
``scars.core.gatekit.evidence.build_entry`` with the point's catalog entry id:

* ``entry`` — ``skip`` writes index.yaml's reversible skip record; ``enter`` removes it
  (``scars.core.formats.index_yaml``).
* ``round-continue`` / ``safety-valve`` — ``FeatureSession.close_round`` writes the round with
  its decision (continue / stop / forced_stop) and decision_reason into iteration-log.yaml. When
  a safety valve fired after the round, the decision is the safety valve's (entry id
  ``safety-valve``, a stop at max rounds is a forced_stop) whichever of the two names asked.
* ``blocked-fix`` — ``FeatureSession.record_blocked_fix`` (retry_with_context /
  reclassify_as_defer, logged with the round).
* ``triage`` — the item decisions (``FeatureSession.decide``) and one entry summarising them
  with the round's own counts, written when the triage is decided (seed 002: triage is recorded
  before the classification is followed): the gate's answer, or the decision that leaves no
  item undecided (:func:`record_triage_decided`); a round's triage still without an entry gets
  it before the round's next decision point writes its own.

The watch reopen is ``reopen``'s, an answers file's replay ``replay``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scars.core.errors import DecisionRefused, FieldError, UsageError
from scars.core.formats.auto_decisions import DecisionEntry
from scars.core.formats.index_yaml import SKIP_KEY, read_skip_record, write_skip_record
from scars.core.gatekit.answers import ROUND_GATES
from scars.core.gatekit.catalog import Answer
from scars.core.gatekit.evidence import Evidence, GateResult, build_entry, validate_answer
from scars.core.gatekit.state_io import gate_result
from scars.core.loops.samsara.catalog import BLOCKED_FIX, ROUND_CONTINUE, ROUND_INTERRUPTED, SAFETY_VALVE, TRIAGE
from scars.core.loops.samsara.gather import feature_root, gather
from scars.core.model import Feature
from scars.core.provenance import Provenance, as_provenance
from scars.core.records import replace
from scars.core.samsara.rounds import RoundFigures, remaining_items, transition_line
from scars.core.samsara.session import FeatureSession, undecided_outcome


def entries_wanted(feature: Feature, auto_entry: bool | None) -> bool:
    """Whether an answer appends its auto-decisions.md entries: ``--auto-entry`` /
    ``--no-auto-entry`` when given, else the feature's execution mode (auto: yes; human: no)."""
    return feature.auto_mode if auto_entry is None else bool(auto_entry)


AD = "auto-decisions.md"
JOURNAL = ".scars/journal.jsonl"


def _triage_entry(session: FeatureSession, user: str, reason: str | None = None) -> DecisionEntry:
    """The triage decision point's entry: the item decisions as they stand, counted."""
    ev = gather(TRIAGE, session.path, session=session)
    c = ev.context["counts"]
    undecided = ev.context["undecided"]
    # The round's own counts, said in the form `scars log verify` checks against the round
    # (scars.core.gates.verify.triage_counts).
    summary = triage_summary(ev.context.get("round"), c) + f" ({ev.context['total']} items remaining)"
    done = TRIAGE.answers[0]
    answer = replace(
        done,
        label=f"Triage recorded: {summary}" + (f"; {undecided} undecided" if undecided else ""),
        consequence=done.consequence if not undecided else f"re-run triage: {undecided} items are still undecided",
    )
    return build_entry(
        ev, answer, reason, user=user, rationale=reason or f"{user} triaged the remaining items: {summary}"
    )


def triage_summary(round_no: int | None, counts: Mapping[str, int]) -> str:
    """How a triage entry names its round's classification: "round R: fix F, accept A, defer D"."""
    head = f"round {round_no}: " if round_no else ""
    return f"{head}fix {counts.get('fix', 0)}, accept {counts.get('accept', 0)}, defer {counts.get('defer', 0)}"


def record_triage_decided(session: FeatureSession, *, auto_entry: bool | None = None) -> int | None:
    """The triage decision point's entry, written the moment the triage is decided (seed 002: the
    gatekeeper's decision is recorded before the classification is applied): after the decision
    that leaves no counted item undecided, when no entry covers the open round's triage as it now
    stands. Called by the fronts that record item decisions one by one (`scars decide`, the app).
    Returns the entry's number (None: not wanted, or not decided yet)."""
    if session.read_only or not entries_wanted(session.feature, auto_entry) or not _triage_due(session):
        return None
    if gather(TRIAGE, session.path, session=session).context["undecided"]:
        return None  # still being classified: the entry comes when it is, or before the next decision point
    return session.append_auto_decision(_triage_entry(session, session.decided_by()), source=None)


def _triage_due(session: FeatureSession) -> bool:
    """The open round has triage decisions that no triage entry covers yet."""
    if not session.round_triage():
        return False
    last = session.last_entry_seq(TRIAGE.entry_id)
    return last == 0 or session.round_triage_changed_after(last)


def _with_triage(session: FeatureSession, user: str, entries: list[DecisionEntry]) -> list[DecisionEntry]:
    """``entries`` of a later decision point, after the round's triage entry when it is due."""
    return ([_triage_entry(session, user)] if _triage_due(session) else []) + entries


def _apply_entry(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str, want: bool
) -> GateResult:
    ctx = ev.context
    index = Path(session.feature.path) / "index.yaml"
    if ans.value == "skip":
        if ctx["verdict"] == "skip" and ctx.get("record"):
            line = f"{ctx['record']} — confirmed by {user}" + (f": {reason}" if reason else "")
        else:
            line = (
                f"signal_lost={ctx['signal_lost']}, {ctx['patterns']} cross-task pattern(s), "
                f"{ctx['failures']}, iteration skipped by {user}: {reason} (reply to override)"
            )
        extra = [f"index.yaml: {SKIP_KEY} written (reversible: answer enter to remove it)"]
    else:
        line = None
        extra = (
            [f"index.yaml: {SKIP_KEY} removed"]
            if read_skip_record(index, feature_root(session.feature)) is not None
            else []
        )
    number = None
    recorded = []
    if want:
        entry = build_entry(ev, ans, reason, user=user, extra_consequences=extra)
        number = session.append_auto_decision(entry, source=source)
        recorded.append(AD)
    if write_skip_record(index, line, session.feature.name, root=feature_root(session.feature)):
        recorded.append("index.yaml")
    return gate_result(
        ev, ans, reason, user, recorded, number, with_evidence=True, **({"skip_record": line} if line else {})
    )


def _round_decision(ev: Evidence, ans: Answer) -> str:
    """The round decision an answer at the round gate makes: a stop at max rounds is forced."""
    if ans.value == "continue":
        return "continue"
    return "forced_stop" if "max_rounds" in ev.context["valves"] else "stop"


_VALVE_NAMES = {"max_rounds": "max rounds", "stagnation": "stagnation", "net_rot": "net rot"}


def _close(
    session: FeatureSession,
    ev: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    decision: str,
    user: str,
    want: bool,
    trigger: str | None = None,
    fields: dict[str, Any] | None = None,
    as_written: bool = False,
    explicit: bool = False,
    overrides: list[str] | None = None,
) -> tuple[GateResult, dict[str, Any]]:
    """Close the open round with ``decision`` (the one path of the round gate and `scars round
    close`); returns the result and the round as written. ``as_written``: the reason is the
    round's decision_reason word for word (`scars round close`); the gate names the fired valve
    before it."""
    fig: RoundFigures = ev.context["fig"]
    valves: list[str] = ev.context["valves"]
    if decision == "interrupted" or (as_written and reason):
        why = reason or ""
    else:
        verb = "continue" if decision == "continue" else "stop"
        why = reason or (
            f"user chose to {verb}: signal_lost {fig.signal_lost_before} → {fig.signal_lost_after}, "
            f"{fig.remaining} remaining"
        )
        if valves and decision == "continue":
            why = f"continue despite safety valve {', '.join(valves)}: {why}"
        elif valves:
            why = f"safety valve {', '.join(_VALVE_NAMES.get(v, v) for v in valves)}: {why}"
    if decision == "forced_stop" and trigger is None and valves:
        trigger = "max_rounds" if "max_rounds" in valves else valves[0]
    kwargs = dict(fields or {})
    if decision == "continue" and valves:
        # Valves apply on every path: continuing past one is an explicit override with its reason.
        named = set(overrides or ())
        if not explicit and not set(valves) <= named:
            missing = ", ".join(v for v in valves if v not in named)
            raise DecisionRefused(
                f"round {fig.round}: safety valve(s) {missing} fired; continuing needs the override "
                f"(scars round close --decision continue --override {missing.split(', ')[0]} --reason WHY, or "
                "the safety-valve gate)",
                [FieldError("override", f"safety valve(s) {missing} not overridden")],
            )
        kwargs["valve_overrides"] = [{"valve": v, "reason": why, "by": user} for v in valves]
    # The iteration ends with this round: seed 002's final transition line, said and recorded.
    transition = None
    if decision in ("stop", "forced_stop"):
        transition = transition_line(
            session.feature.iteration_log,
            round_no=fig.round,
            signal_before=fig.signal_lost_before,
            signal_after=fig.signal_lost_after,
            fixed=fig.fixed,
            accepted=fig.accepted,
            deferred=fig.deferred,
        )
    entries: list[DecisionEntry] = []
    if want:
        extra = [f"iteration-log.yaml: round {fig.round} decision {decision}"]
        if fig.undecided:
            extra.append(f"{len(fig.undecided)} undecided item(s): {undecided_outcome(decision, fig.round)}")
        if transition:
            extra.append(transition)
        if decision == "forced_stop":
            listed = [it.id for it in remaining_items(session.feature)]
            extra.append(f"{len(listed)} remaining item(s) listed: {', '.join(listed) or 'none'}")
        entries = _with_triage(
            session, user, [build_entry(ev, ans, reason, user=user, rationale=why or None, extra_consequences=extra)]
        )
    if trigger is not None:
        kwargs["trigger"] = trigger
    round_ = session.close_round(decision, why, entries=entries, **kwargs)
    recorded = ([AD] if entries else []) + ["iteration-log.yaml", JOURNAL]
    more = {"transition": transition} if transition else {}
    return gate_result(
        ev, ans, reason, user, recorded, None, with_evidence=True, round=fig.round, round_decision=decision, **more
    ), round_


def _apply_round(
    session: FeatureSession,
    ev: Evidence,
    ans: Answer,
    reason: str | None,
    user: str,
    source: str,
    want: bool,
    round_fields: dict[str, Any] | None = None,
) -> GateResult:
    # The safety-valve gate's own answer is the explicit override (a plain round-continue answer to
    # continue was refused when its evidence was gathered).
    return _close(
        session,
        ev,
        ans,
        reason,
        decision=_round_decision(ev, ans),
        user=user,
        want=want,
        fields=round_fields,
        explicit=ev.gate.id == "safety-valve",
    )[0]


def _apply_blocked(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str, want: bool
) -> GateResult:
    item = ev.context["item"]
    outcome = "retry_with_context" if ans.value == "retry" else "reclassify_as_defer"
    entries: list[DecisionEntry] = []
    if want:
        extra = [f"blocked-fix outcome {outcome} for {item} (journal; logged with the round)"]
        entries = _with_triage(session, user, [build_entry(ev, ans, reason, user=user, extra_consequences=extra)])
    session.record_blocked_fix(item, outcome, reason, entries=entries)
    recorded = ([AD] if entries else []) + [JOURNAL]
    return gate_result(ev, ans, reason, user, recorded, None, with_evidence=True, item=item, outcome=outcome)


def _apply_triage(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str, want: bool
) -> GateResult:
    number = None
    recorded = [JOURNAL]
    if want and (_triage_due(session) or reason):
        # Written once per triage: not again when its entry was written as it was decided
        # (record_triage_decided), unless the answer gives a reason of its own.
        number = session.append_auto_decision(_triage_entry(session, user, reason), source=source)
        recorded.insert(0, AD)
    c = ev.context["counts"]
    return gate_result(
        ev, ans, reason, user, recorded, number, with_evidence=True, counts=dict(c), undecided=ev.context["undecided"]
    )


_APPLY = {
    "entry": _apply_entry,
    "round-continue": _apply_round,
    "safety-valve": _apply_round,
    "blocked-fix": _apply_blocked,
    "triage": _apply_triage,
}


def apply(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    session: FeatureSession | None,
    source: Provenance | str | None,
    auto_entry: bool | None = None,
    round_fields: dict[str, Any] | None = None,
) -> GateResult:
    """Record a validated answer under ``session`` (open and writable). ``round_fields``: a round
    gate's Rule-3 fields (budget_spent, evidence_gained, residual_risk) given with the answer.

    ``source``: the answer's provenance, kept in every journal record it writes (and said in its
    entries); a bare label is a change of the session's own provenance (`scars decide --blocked`),
    or read by ``provenance.as_provenance`` when the session has none. Who the answer is recorded
    as is the session's rule (``FeatureSession.decided_by``: refused, before anything is written,
    when an agent answers a human-mode gate without a terminal)."""
    if session is None or session.read_only:
        raise UsageError("a samsara gate records under a writable FeatureSession")
    prov = _provenance_of(session, source)
    want = entries_wanted(session.feature, auto_entry)
    with session.answering(prov):
        user = session.decided_by()  # AgentAnswerRefused before anything is written
        evidence.context["provenance"] = prov
        journaled = len(session.records)
        if evidence.gate.id in ROUND_GATES:
            result = _apply_round(session, evidence, ans, reason, user, prov.via, want, round_fields)
        else:
            if round_fields:
                raise UsageError(
                    f"budget_spent / evidence_gained / residual_risk belong to a round gate, not {evidence.gate.id}"
                )
            result = _APPLY[evidence.gate.id](session, evidence, ans, reason, user, prov.via, want)
        if len(session.records) == journaled:  # a human-mode entry or triage gate: no record of its own
            session.record_gate_answer(evidence.gate.id, ans.value, reason)
    result.source = prov.via or prov.channel
    result.extra["provenance"] = prov.to_record()
    return result


def _provenance_of(session: FeatureSession, source: Provenance | str | None) -> Provenance:
    if isinstance(source, Provenance):
        return source
    if session.provenance is not None:
        return session.provenance.with_via(source or session.provenance.via)
    return as_provenance(source)


def writable(path: Path, user: str, provenance: Provenance | None = None) -> FeatureSession:
    return FeatureSession.open(path, user=user, provenance=provenance)


def _options_for(evidence: Evidence) -> dict[str, Any]:
    """The gather options that re-read ``evidence`` (a round gate's figures ride along: computed
    again only when what they were computed from changed meanwhile)."""
    return {
        "item": evidence.context.get("item"),
        "blocked": evidence.context.get("blocked"),
        "known_figures": evidence.context.get("held"),
    }


def record(
    evidence: Evidence,
    answer_text: str,
    reason: str | None,
    *,
    user: str,
    source: Provenance | str,
    session: FeatureSession | None = None,
    auto_entry: bool | None = None,
    round_fields: dict[str, Any] | None = None,
) -> GateResult:
    """Re-read the evidence under the writer lock (state may have moved), validate, record.

    ``session``: the caller's open writable session (the app holds one); else one is opened
    (and the lock taken) for this answer."""
    kw: dict[str, Any] = {"user": user, "source": source, "auto_entry": auto_entry, "round_fields": round_fields}
    if session is not None:
        return _record_in(session, evidence, answer_text, reason, **kw)
    with writable(evidence.target, user, as_provenance(source)) as own:
        return _record_in(own, evidence, answer_text, reason, **kw)


def _record_in(
    session: FeatureSession,
    evidence: Evidence,
    answer_text: str,
    reason: str | None,
    *,
    user: str,
    source: Provenance | str | None,
    auto_entry: bool | None,
    round_fields: dict[str, Any] | None = None,
) -> GateResult:
    fresh = gather(evidence.gate, evidence.target, session=session, **_options_for(evidence))
    ans, reason = validate_answer(fresh, answer_text, reason)
    return apply(
        fresh, ans, reason, user=user, session=session, source=source, auto_entry=auto_entry, round_fields=round_fields
    )


def record_triage(
    evidence: Evidence, *, user: str, source: Provenance | str, auto_entry: bool | None = None
) -> GateResult | None:
    """The triage gate after the app recorded the item decisions (None: no decision was made)."""
    with writable(evidence.target, user, as_provenance(source)) as session:
        fresh = gather(TRIAGE, evidence.target, session=session)
        if not any(fresh.context["counts"].values()):
            return None
        return apply(fresh, TRIAGE.answers[0], None, user=user, session=session, source=source, auto_entry=auto_entry)


def close_round(
    session: FeatureSession,
    decision: str,
    reason: str,
    *,
    auto_entry: bool | None = None,
    override: list[str] | None = None,
    **fields: Any,
) -> dict[str, Any]:
    """:func:`close_round_result`'s round as written."""
    return close_round_result(session, decision, reason, auto_entry=auto_entry, override=override, **fields)[1]


def close_round_result(
    session: FeatureSession,
    decision: str,
    reason: str,
    *,
    auto_entry: bool | None = None,
    override: list[str] | None = None,
    **fields: Any,
) -> tuple[GateResult, dict[str, Any]]:
    """`scars round close`: the round gate's path with the decision given directly (continue,
    stop, forced_stop or interrupted) and the round's other fields; returns the gate's result
    (its ``extra["transition"]``: seed 002's final transition line, when the iteration ends) and
    the round written. ``override``: the safety valves a ``continue`` goes past on purpose (each
    must be named)."""
    ev = gather(ROUND_CONTINUE, session.path, session=session)
    if ev.facts.get("pending_review"):
        raise DecisionRefused(
            f"round close refused: {len(ev.facts['pending_review'])} accept(s) wait for a second person's sign-off",
            [FieldError("pending_review", "accepts not signed off")],
        )
    if decision == "forced_stop" and ev.gate.id != "safety-valve":
        ev.gate = SAFETY_VALVE  # a forced stop is the safety valve's decision point
    ans = (
        ROUND_INTERRUPTED
        if decision == "interrupted"
        else ev.gate.answer("continue" if decision == "continue" else "stop")
    )
    assert ans is not None  # both round gates answer continue and stop
    trigger = fields.pop("trigger", None)
    if session.provenance is not None:
        ev.context["provenance"] = session.provenance  # said in the round's entry
    return _close(
        session,
        ev,
        ans,
        reason,
        decision=decision,
        user=session.decided_by(),  # AgentAnswerRefused before anything is written
        want=entries_wanted(session.feature, auto_entry),
        trigger=trigger,
        fields=fields,
        as_written=True,
        overrides=override,
    )


def record_blocked(
    session: FeatureSession, item: str, outcome: str, reason: str | None, *, auto_entry: bool | None = None
) -> GateResult:
    """`scars decide ITEM --blocked retry|reclassify`: the blocked-fix gate's answer."""
    ev = gather(BLOCKED_FIX, session.path, session=session, item=item)
    answer = "retry" if outcome == "retry_with_context" else "defer"
    return _record_in(session, ev, answer, reason, user=session.user, source=None, auto_entry=auto_entry)
