"""samsara's gates: entry, triage, round-continue, safety-valve, blocked-fix (and the watch reopen).

Evidence is read through ``FeatureSession`` (the feature, the journal's decisions and the open
round): the round's figures once (``scars.core.samsara.rounds.round_figures``), its valves as the
loop checks them after the round (``valves_after_round``), the blocked fixes awaiting an outcome,
the advisor's advice. Every front end — the app's round gate, ``scars gate``, answers files,
``scars round close``, ``scars decide --blocked`` — records through :func:`apply` /
:func:`close_round` under the feature's writer lock: the loop's own state first, then, in auto
mode (``Execution mode: auto``) or with ``--auto-entry``, one auto-decisions.md entry per decision
point, built by ``scars.core.gatekit.evidence.build_entry`` with the point's catalog entry id:

* ``entry`` — ``skip`` writes ``iteration_skip_record: "<one-line record>"`` at the top level of
  index.yaml; ``enter`` removes it (the record is reversible). A text edit of that one line,
  atomic, every other byte of index.yaml kept.
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
* ``watch-reopen`` — a fired re-review watch sends the accepted item back to triage (always one
  entry: the decision is scars', not a person's).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from scars.core.advice.advisor import advise_feature
from scars.core.errors import ChangedOnDisk, DecisionRefused, FieldError, UsageError
from scars.core.formats.auto_decisions import DecisionEntry
from scars.core.gatekit.answers import ROUND_GATE_KEYS, ROUND_GATES, AnswersFile
from scars.core.gatekit.catalog import (
    DECISION_POINTS,
    GATES,
    ROUND_INTERRUPTED,
    SAMSARA_MAX_ROUNDS_REACHED,
    SAMSARA_NET_ROT_WARNING,
    SAMSARA_STAGNATION_WARNING,
    Answer,
    Gate,
)
from scars.core.gatekit.evidence import Evidence, GateResult, build_entry, validate_answer
from scars.core.gatekit.state_io import gate_result
from scars.core.loops.samsara.reader import feature_state
from scars.core.model import GROUP_LABEL, GROUPS, REGISTRY_FILE, Feature, ScarItem
from scars.core.provenance import Provenance, as_provenance
from scars.core.samsara.aggregate import parse_failures_said
from scars.core.samsara.decisions import validate_decision
from scars.core.samsara.rounds import (
    RULE_3,
    RoundFigures,
    Valve,
    remaining_items,
    remaining_items_listed,
    transition_line,
    valves_after_round,
)
from scars.core.samsara.session import FeatureSession, undecided_outcome
from scars.core.samsara.watches import WatchResult, _append, already_reopened, read_watch_log
from scars.core.sanitize import one_line
from scars.core.storage import safe_read
from scars.core.storage.durable import atomic_write
from scars.core.text import text_problem

SKIP_KEY = "iteration_skip_record"
MAX_FILES_NAMED = 20


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def _open_read_only(path: Path) -> FeatureSession:

    return FeatureSession.open(path, read_only=True)


def _files_read(feature) -> list[str]:
    files: list[str] = []
    reports = [r.file for r in feature.reports]
    files.extend(reports[:MAX_FILES_NAMED])
    if len(reports) > MAX_FILES_NAMED:
        files.append(f"and {len(reports) - MAX_FILES_NAMED} more scar reports in scar-reports/")
    base = Path(feature.path)
    for name in ("index.yaml", "iteration-log.yaml"):
        if (base / name).is_file():
            files.append(name)
    if feature.contract is not None and feature.contract.file:
        files.append(feature.contract.file)
    reg = feature.registry
    if reg is not None and reg.state != "missing":
        files.append(REGISTRY_FILE)
    return files


def _failures_figure(failures) -> str:
    """The parse failures counted by file; said in full when a file failed more than once."""
    files = len({f.file for f in failures})
    return str(files) if files == len(failures) else parse_failures_said(failures)


def _common(feature) -> list[tuple[str, str]]:
    counts = feature.counts or {}
    by_cat = ", ".join(f"{k} {v}" for k, v in counts.items())
    return [
        ("feature", feature.name),
        ("signal_lost", f"{feature.signal_lost}" + (f" ({by_cat})" if by_cat else "")),
        ("cross-task patterns", str(len(feature.cross_task_patterns))),
        ("parse failures", _failures_figure(feature.parse_failures)),
    ]


def _failure_warnings(feature) -> list[str]:
    out = []
    for pf in feature.parse_failures[:10]:
        # The registry holds no items: its refs stay counted as unknown (formats.md §1.7).
        what = "systemic refs unknown, still counted" if pf.of_registry else "items not counted"
        out.append(f"parse failure ({what}): {pf}")
    if len(feature.parse_failures) > 10:
        out.append(f"and {len(feature.parse_failures) - 10} more parse failures")
    for file, ref in feature.dangling_refs[:10]:
        out.append(f"dangling systemic_ref {ref} in {file}")
    return out


def entries_wanted(feature: Feature, auto_entry: bool | None) -> bool:
    """Whether an answer appends its auto-decisions.md entries: ``--auto-entry`` /
    ``--no-auto-entry`` when given, else the feature's execution mode (auto: yes; human: no)."""
    return feature.auto_mode if auto_entry is None else bool(auto_entry)


def _valve_warning(v: Valve, fig: RoundFigures, feature: Feature) -> str:
    """The upstream warning text of an active safety valve, figures filled in; at max rounds
    the forced stop's remaining items, listed (the seed's rule: "forced stop with remaining
    items listed"), not the rule sentence."""
    f = v.figures or {}
    if v.id == "stagnation":
        rounds = f.get("rounds") or []
        b = rounds[0].get("before") if rounds else fig.signal_lost_before
        a = rounds[-1].get("after") if rounds else fig.signal_lost_after
        return SAMSARA_STAGNATION_WARNING.format(before=b, after=a)
    if v.id == "net_rot":
        return SAMSARA_NET_ROT_WARNING.format(new=f.get("new"), resolved=f.get("resolved"))
    if v.id == "max_rounds":
        listed = remaining_items_listed(feature)
        head = SAMSARA_MAX_ROUNDS_REACHED.format(
            done=f.get("rounds_done"), max_rounds=f.get("max_rounds"), remaining=len(listed)
        )
        return head + "".join(f"\n  - {line}" for line in listed)
    return v.message


def gather(
    gate: Gate,
    path: Path,
    *,
    session: FeatureSession | None = None,
    item: str | None = None,
    blocked: str | None = None,
    follow_state: bool = False,
    **_: Any,
) -> Evidence:
    """``follow_state``: the round's decision point whichever it is now (the safety valve's when
    a valve fired, continue there being the override), not the gate asked for."""
    if session is not None:
        return _GATHER[gate.id](gate, session, item=item, blocked=blocked, follow_state=follow_state)
    with _open_read_only(Path(path)) as own:
        return _GATHER[gate.id](gate, own, item=item, blocked=blocked, follow_state=follow_state)


def _base(gate: Gate, session: FeatureSession, prompt: str, figures, warnings=None, **kw) -> Evidence:
    feature = session.feature
    files = _files_read(feature)
    if gate.id != "entry" and (Path(feature.path) / ".scars" / "journal.jsonl").is_file():
        files.append(".scars/journal.jsonl (decisions and the open round)")
    return Evidence(
        gate=gate,
        target=Path(feature.path),
        state_file=None,
        workflow_prompt=prompt,
        figures=figures,
        warnings=list(warnings or []),
        files_read=files,
        context={
            "root": Path(feature.path),
            "feature": feature.name,
            "auto_mode": feature.auto_mode,
            "loop_state": feature_state(
                feature, Path(feature.path), decisions=dict(session.decisions), open_round=session.current_round()
            ),
        },
        **kw,
    )


def _gather_entry(gate: Gate, session: FeatureSession, **_: Any) -> Evidence:
    feature = session.feature
    verdict = feature.entry.verdict if feature.entry is not None else "unknown"
    figures = _common(feature) + [("entry verdict", verdict)]
    if feature.entry is not None and feature.entry.record:
        figures.append(("record", feature.entry.record))
    current = _index_value(Path(feature.path) / "index.yaml", _root(feature))
    if current:
        figures.append(("skip record on file", current))
    warnings = _failure_warnings(feature)
    if verdict == "unknown" and not feature.parse_failures and feature.entry is not None and feature.entry.reasons:
        warnings.insert(0, f"entry verdict unknown: {feature.entry.reasons[0]}")
    elif verdict == "unknown":
        warnings.insert(
            0, "entry verdict unknown (an input file could not be used): never default-skip; the gate decides"
        )
    advice = {
        "gate": "the entry criterion holds (cross-task pattern or signal_lost >= 5): the loop asks whether to enter",
        "skip": "the criterion does not hold: the loop would default-skip with a reversible record",
        "unknown": "parse failures make the verdict unknown: decide between iteration and validate-and-ship",
    }.get(verdict)
    if verdict == "unknown" and not feature.parse_failures and feature.entry is not None and feature.entry.reasons:
        advice = f"{feature.entry.reasons[0]}: decide between iteration and validate-and-ship once it has"
    prompt = gate.prompt.format(
        signal_lost=feature.signal_lost,
        patterns=len(feature.cross_task_patterns),
        failures=len({f.file for f in feature.parse_failures}),  # files, as the record counts them
        verdict=verdict,
    )
    ev = _base(
        gate,
        session,
        prompt,
        figures,
        warnings,
        advice=advice,
        default="skip" if verdict == "skip" else "enter",
        reason_optional={"skip"} if verdict == "skip" else set(),
        uncertainty=("medium", "parse failures leave items uncounted") if verdict == "unknown" else ("low", ""),
        facts={
            "signal_lost": feature.signal_lost,
            "cross_task_patterns": len(feature.cross_task_patterns),
            "parse_failures": len(feature.parse_failures),
            "verdict": verdict,
        },
    )
    ev.context.update(
        verdict=verdict,
        record=feature.entry.record if feature.entry else "",
        signal_lost=feature.signal_lost,
        patterns=len(feature.cross_task_patterns),
        failures=parse_failures_said(feature.parse_failures),
    )
    return ev


def _advice(feature: Feature, decisions: dict[str, Any], valve_advice: str | None) -> str:
    """The valves' advice and the advisor's for the next round: beside the choice, never instead."""
    lines = [valve_advice] if valve_advice else []
    lines.extend(advise_feature(feature, decisions).summary(width=96).splitlines())
    return "\n".join(lines)


def round_headline(facts: Mapping[str, Any]) -> str:
    """The round gate's first line, from its figures (``RoundFigures.to_dict``), as the app's modal
    and ``scars gate`` show it: formats.md §1.4's "Round R done. signal_lost N → N'. Fixed K, J
    remaining." once something was decided in the round; an open round in which nothing was decided
    yet is not "done", and the line says so. Fixes decided whose items are still listed are said
    beside "Fixed K" (right after `f` the line said "Fixed 0" and nothing of the fix)."""
    r = facts["round"]
    open_fixes = facts.get("fix_open") or 0
    pending = f" ({open_fixes} fix decided, not applied yet)" if open_fixes == 1 else ""
    if open_fixes > 1:
        pending = f" ({open_fixes} fixes decided, not applied yet)"
    figures = (
        f"signal_lost {facts['signal_lost_before']} → {facts['signal_lost_after']}. "
        f"Fixed {facts['fixed']}{pending}, {facts['remaining']} remaining."
    )
    if not facts["triaged"] and not facts["fixed"]:
        return f"Round {r} is open and nothing was decided in it yet. {figures}"
    return f"Round {r} done. {figures}"


def undecided_warning(fig: RoundFigures, counted: int) -> str:
    """What happens to the round's undecided items, true also at the last round: continuing past
    ``max_rounds`` is only the max-rounds override."""
    nxt = fig.round + 1
    if fig.round >= fig.max_rounds:
        carry = (
            f"continue carries them to round {nxt}, past max_rounds {fig.max_rounds}: only with the "
            "max-rounds override (the safety-valve gate's continue, with a reason)"
        )
    else:
        carry = f"continue carries them to round {nxt}"
    return (
        f"{len(fig.undecided)} of {counted} items undecided: {carry}; stop leaves them undecided (the round records it)"
    )


def _gather_round(gate: Gate, session: FeatureSession, *, follow_state: bool = False, **_: Any) -> Evidence:
    feature = session.feature
    fig = session.round_figures()
    valves = valves_after_round(feature, session.decisions, fig)
    active = [v for v in valves if v.kind == "safety_valve" and v.active]
    if gate.id == "safety-valve" and not active:
        raise UsageError(
            f"{feature.name}: no safety valve is active for round {fig.round}; answer `scars gate round-continue` instead"
        )
    # The decision point follows the state: a fired valve makes it the safety valve's.
    point = GATES["safety-valve"] if active else GATES["round-continue"]
    if follow_state:
        gate = point  # asked at the decision point itself: no refusal for having asked the other
    before = fig.signal_lost_before
    prompt = point.prompt.format(
        round=fig.round, before=before, after=fig.signal_lost_after, fixed=fig.fixed, remaining=fig.remaining
    )
    if active:
        prompt = "\n".join(_valve_warning(v, fig, feature) for v in active) + "\n\n" + prompt
    blocked = _blocked_awaiting(feature, session)
    counted = sum(1 for it in feature.items if it.counted)
    figures = _common(feature) + [
        ("round", f"{fig.round} of {fig.max_rounds}"),
        ("signal_lost this round", f"{before} → {fig.signal_lost_after}"),
        ("fixed / remaining", f"{fig.fixed} fixed, {fig.remaining} remaining ({fig.triaged} triaged this round)"),
        ("accepted / deferred", f"{fig.accepted} accepted, {fig.deferred} deferred"),
        ("undecided", f"{len(fig.undecided)} of {counted}"),
    ]
    if fig.fix_open:
        figures.append(("fix decisions not applied", f"{len(fig.fix_open)} (their items are still in the reports)"))
    for key in RULE_3:
        if key in fig.rule3:
            figures.append((f"{key} (from {', '.join(fig.rule3_sources)})", _rule3_text(fig.rule3[key])))
    rule3_missing = [k for k in RULE_3 if k not in fig.rule3]
    if rule3_missing:
        figures.append(("Rule 3 to give", ", ".join(rule3_missing) + " (or none; not given: recorded as none, said)"))
    pending = [i for i, d in session.round_triage().items() if d.action == "accept" and d.pending_review]
    warnings = [f"safety valve {v.id}: {_valve_warning(v, fig, feature)}" for v in active]
    if fig.undecided:
        warnings.insert(0, undecided_warning(fig, counted))
    if pending:
        warnings.insert(
            0,
            f"{len(pending)} accept(s) wait for a second person's sign-off ({', '.join(pending[:5])}): "
            "the round cannot close until they are signed off (s in the app, scars decide ID --sign-off NAME) "
            "or decided again",
        )
    warnings += [f"watch-for {v.id}: {v.message}" for v in valves if v.kind == "watch_for" and v.active]
    near = [v for v in valves if v.kind == "safety_valve" and v.near and not v.active]
    warnings += [f"near safety valve {v.id}: {v.message}" for v in near]
    warnings += [
        f"blocked fix {it.id} awaits its outcome (blocked-fix gate): {one_line(it.text, 120)}" for it in blocked
    ]
    if active:
        valve_advice = (
            f"safety valve(s) {', '.join(v.id for v in active)} fired: the valve suggests stopping; "
            "it is advisory — the gate decides (continuing needs a reason)"
        )
    else:
        valve_advice = None
    fig_facts = fig.to_dict()
    ev = _base(
        point,
        session,
        prompt,
        figures,
        warnings,
        headline=round_headline(fig_facts),
        default="stop" if active else "continue",
        advice=_advice(feature, session.decisions, valve_advice),
        facts={
            **fig_facts,
            "valves": [v.id for v in active],
            "blocked": [it.id for it in blocked],
            "pending_review": pending,
            "rule3_missing": rule3_missing,
        },
    )
    if active and gate.id == "round-continue":
        # Continuing while a valve fires is an override: it is given at the safety valve's gate,
        # never by an answer to the plain round-continuation question (CLI, answers file alike).
        ev.refused["continue"] = (
            f"safety valve(s) {', '.join(v.id for v in active)} fired: continuing needs the override — "
            "answer the safety-valve gate (scars gate safety-valve --answer continue --reason WHY; "
            "`safety-valve:` in an answers file)"
        )
    if pending:
        for a in point.answers:
            ev.refused[a.value] = f"{len(pending)} accept(s) wait for a second person's sign-off"
    ev.context.update(fig=fig, valves=[v.id for v in active], blocked=[it.id for it in blocked])
    return ev


NONE_WORDS = frozenset({"none", "[]", "{}", "-"})


def _given_round_fields(entry: dict[str, Any]) -> dict[str, Any]:
    """:func:`round_fields` of the Rule-3 keys an answers-file entry gives."""
    return round_fields(**{k: entry[k] for k in ROUND_GATE_KEYS if k in entry})


def round_fields(
    *,
    budget_spent: Any = None,
    evidence_gained: Any = None,
    residual_risk: Any = None,
    rule3: Any = None,
) -> dict[str, Any]:
    """A round gate's Rule-3 fields as given (flags, an answers file, the app's form) made into
    the round's values: ``budget_spent`` a mapping of non-negative counts (``K=N,…`` text too),
    ``evidence_gained`` / ``residual_risk`` lists of texts (one text is a one-item list); the word
    ``none`` (or an empty list / mapping) records none, explicitly; ``rule3: none`` all three. A
    field not given is left out (the round takes it from its fix-round reports, or refuses).
    Raises DecisionRefused naming every bad field."""
    errors: list[FieldError] = []
    out: dict[str, Any] = {}
    if rule3 is not None:
        if isinstance(rule3, str) and rule3.strip().casefold() in NONE_WORDS:
            out.update(budget_spent={}, evidence_gained=[], residual_risk=[])
        else:
            errors.append(FieldError("rule3", "only `none` (record all three Rule-3 fields as none)"))
    if budget_spent is not None:
        value: Any = budget_spent
        if isinstance(value, str):
            text = value.strip()
            if text.casefold() in NONE_WORDS:
                value = {}
            else:
                value = {}
                for part in text.split(","):
                    k, sep, n = part.partition("=")
                    if not part.strip():
                        continue
                    if not sep or not k.strip() or not n.strip().isdigit():
                        errors.append(FieldError("budget_spent", f"{part.strip()!r} is not NAME=COUNT"))
                        break
                    value[k.strip()] = int(n.strip())
        if isinstance(value, dict) and all(
            isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in value.values()
        ):
            out["budget_spent"] = {str(k): n for k, n in value.items()}
        elif not any(e.field == "budget_spent" for e in errors):
            errors.append(FieldError("budget_spent", "must map names to non-negative counts (or be none)"))
    for key, given in (("evidence_gained", evidence_gained), ("residual_risk", residual_risk)):
        if given is None:
            continue
        items = [given] if isinstance(given, str) else given
        if not isinstance(items, (list, tuple)) or not all(isinstance(x, str) for x in items):
            errors.append(FieldError(key, "must be texts (or none)"))
            continue
        texts = [x.strip() for x in items if x.strip()]
        out[key] = [] if len(texts) == 1 and texts[0].casefold() in NONE_WORDS else texts
    if errors:
        raise DecisionRefused(f"round fields refused: {'; '.join(str(e) for e in errors)}", errors)
    return out


def _rule3_text(value: Any) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    if isinstance(value, list):
        return "; ".join(one_line(str(x), 120) for x in value) or "none"
    return one_line(str(value), 200)


def _reported_blocked(feature: Feature, item: ScarItem) -> bool:
    """The implementer reported the item's fix BLOCKED: the item's (era D) status, or its report's
    ``completion_status``."""
    if (item.status or "").strip().lower() == "blocked":
        return True
    return any(
        r.file == item.file and (r.completion_status or "").strip().lower() == "blocked" for r in feature.reports
    )


def _blocked_awaiting(feature: Feature, session: FeatureSession) -> list[ScarItem]:
    """This round's fix items the implementer reported BLOCKED that have no outcome yet."""
    by_id = {it.id: it for it in feature.items}
    out = []
    for item_id, d in session.round_triage().items():
        it = by_id.get(item_id)
        if it is not None and d.action == "fix" and not d.blocked_outcome and _reported_blocked(feature, it):
            out.append(it)
    return out


def _blocked_reason(feature: Feature, item: ScarItem) -> str | None:
    for r in feature.reports:
        if r.file == item.file and (r.completion_status or "").strip().lower() == "blocked":
            narrative = (r.extra or {}).get("narrative")
            if isinstance(narrative, str) and narrative.strip():
                return narrative.strip()
            return f"{r.file} reports completion_status blocked"
    return None


def _gather_blocked(
    gate: Gate, session: FeatureSession, *, item: str | None = None, blocked: str | None = None, **_: Any
) -> Evidence:
    feature = session.feature
    if not item:
        raise UsageError("blocked-fix needs the item: --item ID (`scars status --json` lists the ids)")
    try:
        it = feature.item(item)
    except KeyError:
        raise UsageError(f"{feature.name}: no item {item!r} (`scars status --json` lists the ids)") from None
    reason = (
        blocked
        or _blocked_reason(feature, it)
        or "(the implementer's reason is not recorded on disk; pass --blocked TEXT)"
    )
    d = session.journal_decisions.get(item)
    figures = _common(feature) + [
        ("item", f"{it.id} ({it.category}) in {it.file}" + (f":{it.line}" if it.line else "")),
        ("description", it.text),
        ("current decision", d.action if d is not None else "none"),
        ("blocked because", reason),
    ]
    if it.where:
        figures.append(("where", it.where))
    warnings = []
    if d is None or d.action != "fix":
        warnings.append(f"item {it.id} is not decided fix (a blocked-fix outcome applies to a fix item)")
    if d is not None and d.blocked_outcome:
        warnings.append(f"an outcome is already recorded for this item: {d.blocked_outcome}")
    prompt = gate.prompt.format(description=it.description, reason=reason)
    facts = {
        "item": it.id,
        "description": it.text,
        "current_decision": d.action if d is not None else None,
        "blocked_because": reason,
    }
    ev = _base(gate, session, prompt, figures, warnings, default="retry", facts=facts)
    if d is None or d.action != "fix":
        for a in gate.answers:
            ev.refused[a.value] = f"item {it.id} is not decided fix"
    ev.files_read.insert(0, f"{it.file} (item {it.id})")
    ev.context.update(item=it.id, blocked=blocked)
    return ev


def _triage_groups(feature, decisions) -> tuple[str, dict[str, int]]:
    by_id = {it.id: it for it in feature.items}
    parts = []
    for g in GROUPS:
        ids = [i for i in (feature.groups or {}).get(g, ()) if i in by_id]
        parts.append(f"{GROUP_LABEL[g]}:")
        # Every item, its whole text (the entry preserves the original prompt: formats.md §1.6);
        # a text of several lines keeps them, indented under its bullet.
        for i in ids:
            parts.append("  - " + by_id[i].description.replace("\n", "\n    "))
        parts.append("")
    # The round's own triage (``decisions``: the open round's, FeatureSession.round_triage), as
    # its iteration-log round lists it — a fix that landed is still this round's fix.
    counts = {"fix": 0, "accept": 0, "defer": 0}
    for d in decisions.values():
        if d.action in counts:
            counts[d.action] += 1
    return "\n".join(parts), counts


def _gather_triage(gate: Gate, session: FeatureSession, **_: Any) -> Evidence:
    feature = session.feature
    groups, counts = _triage_groups(feature, session.round_triage())
    counted = [it for it in feature.items if it.counted]
    undecided = sum(1 for it in counted if it.id not in session.decisions)
    prompt = gate.prompt.format(count=len(counted), signal_lost=feature.signal_lost, groups=groups)
    figures = _common(feature) + [
        ("decided", f"fix {counts['fix']}, accept {counts['accept']}, defer {counts['defer']}"),
        ("undecided", str(undecided)),
    ]
    facts = {**counts, "undecided": undecided, "total": len(counted), "round": session.current_round()}
    ev = _base(gate, session, prompt, figures, _failure_warnings(feature), default="done", facts=facts)
    if undecided:
        ev.decision_overrides[gate.answers[0].value] = "revise"  # triage re-runs until every item is classified
    ev.context.update(counts=counts, undecided=undecided, total=len(counted), round=session.current_round())
    return ev


_GATHER = {
    "entry": _gather_entry,
    "round-continue": _gather_round,
    "safety-valve": _gather_round,
    "blocked-fix": _gather_blocked,
    "triage": _gather_triage,
}


# --------------------------------------------------------------------------------------------
# index.yaml: the reversible skip record (a one-line text edit, atomic)
# --------------------------------------------------------------------------------------------


def _yaml_quote(text: str) -> str:
    """A YAML double-quoted scalar on one line (JSON escapes are valid YAML escapes)."""
    out = []
    for ch in json.dumps(" ".join(str(text).split()), ensure_ascii=False)[1:-1]:
        if ch.isprintable() or ch == " ":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


_KEY_LINE = re.compile(rf"^{SKIP_KEY}[ \t]*:")


def _root(feature: Feature) -> Path:
    """The tree a feature's files must stay in (safe_read's symlink rule): its repository."""
    return Path(feature.repo_root or feature.path)


def _index_value(path: Path, root: Path) -> str | None:
    try:
        data = safe_read.load_yaml(path, root=root).value
    except (safe_read.Unreadable, FileNotFoundError):
        return None
    if isinstance(data, dict) and data.get(SKIP_KEY) is not None:
        return str(data.get(SKIP_KEY))
    return None


_TOP_KEY = re.compile(r"^(?![#%\s-]|\.\.\.)[^:\n]+:(\s|$)")


def edit_skip_record(text: str, value: str | None) -> str:
    """``text`` with the top-level ``iteration_skip_record`` set to ``value`` (None: removed).

    Only that key's line (and its continuation lines) changes; every other byte is kept.
    """
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if _KEY_LINE.match(ln)), None)
    new_line = f"{SKIP_KEY}: {_yaml_quote(value)}\n" if value is not None else ""
    if start is not None:
        end = start + 1
        while end < len(lines) and lines[end][:1] in (" ", "\t") and lines[end].strip():
            end += 1
        return "".join(lines[:start]) + new_line + "".join(lines[end:])
    if value is None:
        return text
    # A new record goes at the top of the mapping (README): before its first top-level key, after
    # any leading comments, directives and document start.
    first = next((i for i, ln in enumerate(lines) if _TOP_KEY.match(ln)), None)
    if first is not None:
        return "".join(lines[:first]) + new_line + "".join(lines[first:])
    if text and not text.endswith("\n"):
        text += "\n"
    return text + new_line


def write_skip_record(index_path: Path, value: str | None, feature_name: str, *, root: Path) -> bool:
    """Set or remove the record in index.yaml; True when the file changed. Checked by a re-read.

    index.yaml is read by the one policy (``storage/safe_read``: size, a symlink only inside
    ``root``, UTF-8, the YAML guards) before a byte of it is edited."""
    try:
        raw, fp = safe_read.read_with_fingerprint(
            index_path, root=root, limit=safe_read.YAML_MAX_BYTES, what="index.yaml"
        )
    except safe_read.Unreadable as exc:
        raise UsageError(f"{index_path}: {exc}; the skip record was not written") from None
    try:
        text = safe_read.decode(raw) if raw is not None else ""
        before = safe_read.loads(text).value if text.strip() else {}
    except safe_read.Unreadable as exc:
        raise UsageError(f"{index_path} is not usable YAML ({exc}); the skip record was not written") from None
    if raw is None:
        if value is None:
            return False
        text = f"feature: {_yaml_quote(feature_name)}\n"
        before = safe_read.loads(text).value
    if before is None:
        before = {}
    if not isinstance(before, dict):
        raise UsageError(f"{index_path} is not a mapping; the skip record was not written")
    new = edit_skip_record(text, value)
    if new == text and raw is not None:
        return False
    after = safe_read.loads(new).value
    expected = {k: v for k, v in before.items() if k != SKIP_KEY}
    got = {k: v for k, v in (after or {}).items() if k != SKIP_KEY}
    if got != expected or (after or {}).get(SKIP_KEY) != (" ".join(value.split()) if value is not None else None):
        raise UsageError(f"{index_path}: the skip record could not be edited safely; nothing was written")
    if raw is not None:
        try:
            _again, fp2 = safe_read.read_with_fingerprint(index_path, root=root, what="index.yaml")
        except safe_read.Unreadable:
            fp2 = None
        if fp2 is None or not fp2.same_content(fp):
            raise ChangedOnDisk(f"{index_path} changed on disk while the gate wrote it; nothing was written")
    atomic_write(index_path, new.encode("utf-8"), root=root)
    return True


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


AD = "auto-decisions.md"
JOURNAL = ".scars/journal.jsonl"
TRIAGE = GATES["triage"]


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
        extra = [f"index.yaml: {SKIP_KEY} removed"] if _index_value(index, _root(session.feature)) is not None else []
    number = None
    recorded = []
    if want:
        entry = build_entry(ev, ans, reason, user=user, extra_consequences=extra)
        number = session.append_auto_decision(entry, source=source)
        recorded.append(AD)
    if write_skip_record(index, line, session.feature.name, root=_root(session.feature)):
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


def _writable(path: Path, user: str, provenance: Provenance | None = None) -> FeatureSession:
    return FeatureSession.open(path, user=user, provenance=provenance)


def _options_for(evidence: Evidence) -> dict[str, Any]:
    return {"item": evidence.context.get("item"), "blocked": evidence.context.get("blocked")}


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
    with _writable(evidence.target, user, as_provenance(source)) as own:
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
    with _writable(evidence.target, user, as_provenance(source)) as session:
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
    ev = gather(GATES["round-continue"], session.path, session=session)
    if ev.facts.get("pending_review"):
        raise DecisionRefused(
            f"round close refused: {len(ev.facts['pending_review'])} accept(s) wait for a second person's sign-off",
            [FieldError("pending_review", "accepts not signed off")],
        )
    if decision == "forced_stop" and ev.gate.id != "safety-valve":
        ev.gate = GATES["safety-valve"]  # a forced stop is the safety valve's decision point
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
    ev = gather(GATES["blocked-fix"], session.path, session=session, item=item)
    answer = "retry" if outcome == "retry_with_context" else "defer"
    return _record_in(session, ev, answer, reason, user=session.user, source=None, auto_entry=auto_entry)


# --------------------------------------------------------------------------------------------
# The watch reopen: scars' own decision, always one entry
# --------------------------------------------------------------------------------------------

WATCH_REOPEN = DECISION_POINTS["watch-reopen"]


def _reopen_entry(r: WatchResult, feature: Feature, user: str, prov: Provenance | None) -> DecisionEntry:
    prompt = WATCH_REOPEN.prompt.format(watch=r.watch, text=r.text, item=r.item_id, feature=feature.name, cause=r.cause)
    ev = Evidence(
        gate=WATCH_REOPEN,
        target=Path(feature.path),
        state_file=None,
        workflow_prompt=prompt,
        warnings=[f"the accept came from the {r.origin}"],
        files_read=[f"scars watch check: {r.cause}"],
        uncertainty=("low", "evaluated by scars watch check; a person decides the item again"),
    )
    if prov is not None:
        ev.context["provenance"] = prov  # said in the entry's "decided by" line, as a decision's
    return build_entry(
        ev,
        WATCH_REOPEN.answers[0],
        f"{r.item_id}: its re-review watch fired ({r.cause})",
        user=user,
        rationale=(
            "The accept held only until its re-review signal; the machine-checkable watch "
            f'"{r.watch}" fired, so the accepted risk goes back to triage.'
        ),
    )


def reopen_fired(
    feature_dir: str | os.PathLike,
    results: list[WatchResult],
    *,
    user: str | None = None,
    source: Provenance | None = None,
) -> list[dict[str, Any]]:
    """Reopen the items of fired watches that are not reopened yet.

    Under the feature lock (raises LockHeld when another writer holds it): per item one
    ``reopen`` journal record, one auto-decisions.md entry (``iteration.watch-reopen``,
    decision ``revise``) and one ``fired`` record in watches.jsonl. ``source``: where the check
    ran from (the command's provenance), kept in each of the three as a decision's is; a reopen
    is scars' own (the watch's rule), so it is never refused as an agent's answer. Returns one
    outcome per fired result: ``{item_id, watch, reopened: bool, auto_decision, at | already}``.
    """
    fired = [r for r in results if r.state == "fired" and r.item_id]
    if not fired:
        return []
    outcomes: list[dict[str, Any]] = []
    with FeatureSession.open(feature_dir, user=user, provenance=source) as s:
        log = read_watch_log(feature_dir)
        for r in fired:
            prior = already_reopened(r, log)
            if prior is not None:
                outcomes.append(
                    {
                        "item_id": r.item_id,
                        "watch": r.watch,
                        "reopened": False,
                        "already": prior.get("at"),
                        "auto_decision": prior.get("auto_decision"),
                    }
                )
                continue
            assert r.item_id is not None  # `fired` keeps only results with an item
            journal = r.item_id in s.journal_decisions
            if journal:  # an accept only iteration-log.yaml holds has no journal decision to supersede
                s.reopen(r.item_id, cause=r.cause, watch=r.watch)
            number = s.append_auto_decision(
                _reopen_entry(r, s.feature, s.user, source), source="scars watch check", scars_own=True
            )
            fired_rec: dict[str, Any] = {
                "type": "fired",
                "item_id": r.item_id,
                "watch": r.watch,
                "cause": r.cause,
                "text": r.text,
                "origin": r.origin,
                "by": s.user,
                "auto_decision": number,
                "journal": journal,
            }
            if source is not None:
                fired_rec["provenance"] = source.to_record()
            rec = _append(feature_dir, root=s.root, record=fired_rec)
            log.append(rec)
            outcomes.append(
                {"item_id": r.item_id, "watch": r.watch, "reopened": True, "at": rec["at"], "auto_decision": number}
            )
    return outcomes


# --------------------------------------------------------------------------------------------
# Answers files: validated entirely (read-only, no lock, nothing written), then replayed.
# --------------------------------------------------------------------------------------------

REPLAY_ORDER = ("entry", "triage", "blocked-fix", "safety-valve", "round-continue")


def _validate_items(session: FeatureSession, items: dict[str, dict[str, Any]]) -> list[str]:
    errors = []
    feature = session.feature
    for item_id, entry in items.items():
        fields = {k: v for k, v in entry.items() if k != "action"}
        action: Any = entry.get("action")  # checked by validate_decision below
        try:
            it = feature.item(item_id)
        except KeyError:
            errors.append(f"{item_id}: no such item in {feature.name}")
            continue
        if it.resolved:
            errors.append(f"{item_id}: already resolved in its report")
            continue
        for fe in validate_decision(action, **fields):
            errors.append(f"{item_id}: {fe.field}: {fe.message}")
    return errors


def replay(
    path: str | os.PathLike[str],
    af: AnswersFile,
    *,
    user: str,
    options: dict[str, Any],
    source: Provenance | str,
    auto_entry: bool | None = None,
) -> list[GateResult]:
    feature_dir = Path(path)
    errors: list[str] = []
    plan: list[tuple[str, dict[str, Any]]] = []
    # 1. Validate everything against a read-only view (no lock, no file touched).
    with _open_read_only(feature_dir) as ro:
        errors.extend(_validate_items(ro, af.items))
        # The items open a round when none is open (the one rule: FeatureSession.open_round_for_decision),
        # which is refused after a stop or past max_rounds: said before anything is recorded.
        opens_round = bool(af.items) and ro.current_round() is None
        if opens_round:
            try:
                ro.check_decision_round()
            except DecisionRefused as exc:
                errors.append(f"items: {exc}")
        for gid in REPLAY_ORDER:
            entries = af.gates.get(gid, [])
            if gid == "triage" and af.items and not entries:
                entries = [{"answer": "done"}]
            if gid != "blocked-fix" and len(entries) > 1:
                errors.append(f"{gid}: one answer expected, {len(entries)} given")
                continue
            for e in entries:
                opts = dict(options)
                if e.get("item"):
                    opts["item"] = e["item"]
                if e.get("blocked"):
                    opts["blocked"] = e["blocked"]
                if gid in ROUND_GATES and (af.items or "triage" in af.gates):
                    # Its figures depend on the decisions replayed first; checked again before writing.
                    ans = GATES[gid].answer(e.get("answer") or "")
                    if ans is None:
                        errors.append(
                            f"{gid}: {e.get('answer')!r} is not a valid answer; valid answers: "
                            f"{GATES[gid].valid_answers_text()}"
                        )
                    elif ans.needs_reason or gid == "safety-valve":
                        problem = (
                            text_problem(e.get("reason"), question=GATES[gid])
                            if (ans.needs_reason or e.get("reason"))
                            else None
                        )
                        if problem:
                            errors.append(f"{gid}: {problem}")
                    try:
                        if opens_round:  # the round its figures are of is opened by the items replayed first
                            _given_round_fields(e)
                            plan.append((gid, {**e, **opts}))
                            continue
                        ro_ev = gather(GATES[gid], feature_dir, session=ro)
                        # The valves after the round do not depend on the triage replayed first:
                        # a plain round-continue answer to continue past one is refused here.
                        if (
                            ans is not None
                            and ans.value in ro_ev.refused
                            and "safety valve" in ro_ev.refused[ans.value]
                        ):
                            errors.append(f"{gid}: answer {ans.value!r} refused: {ro_ev.refused[ans.value]}")
                        _given_round_fields(e)
                    except (UsageError, DecisionRefused) as exc:
                        errors.append(f"{gid}: {exc}")
                    plan.append((gid, {**e, **opts}))
                    continue
                try:
                    ev = gather(GATES[gid], feature_dir, session=ro, item=opts.get("item"), blocked=opts.get("blocked"))
                    if gid == "blocked-fix" and (af.items.get(opts.get("item") or "") or {}).get("action") == "fix":
                        ev.refused.clear()  # decided fix by this same file, before the blocked-fix step
                    validate_answer(ev, e.get("answer"), e.get("reason"))
                    if gid in ROUND_GATES:
                        _given_round_fields(e)
                except (UsageError, DecisionRefused) as exc:
                    errors.append(f"{gid}: {exc}")
                    continue
                plan.append((gid, {**e, **opts}))
    if errors:
        raise DecisionRefused(
            f"{af.source}: invalid answers file, nothing was recorded:\n  " + "\n  ".join(errors),
            [FieldError("answers", e) for e in errors],
        )
    # 2. Replay under the writer lock, in the loop's order.
    results: list[GateResult] = []
    with _writable(feature_dir, user, as_provenance(source)) as session:
        for gid, e in plan:
            if gid == "triage":
                for item_id, entry in af.items.items():
                    fields = {k: v for k, v in entry.items() if k != "action"}
                    session.decide(item_id, entry["action"], **fields)
            ev = gather(GATES[gid], feature_dir, session=session, item=e.get("item"), blocked=e.get("blocked"))
            ans, reason = validate_answer(ev, e.get("answer"), e.get("reason"))
            given: dict[str, Any] | None = _given_round_fields(e) if gid in ROUND_GATES else None
            results.append(
                apply(
                    ev,
                    ans,
                    reason,
                    user=user,
                    session=session,
                    source=source,
                    auto_entry=auto_entry,
                    round_fields=given,
                )
            )
    return results
