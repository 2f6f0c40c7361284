"""What samsara's gates show: the Evidence of entry, triage, round-continue, safety-valve and
blocked-fix, read through ``FeatureSession`` (the feature, the journal's decisions and the open
round): the round's figures once (``scars.core.samsara.rounds.round_figures``), its valves as the
loop checks them after the round (``valves_after_round``), the blocked fixes awaiting an outcome,
the advisor's advice. Recording an answer is ``record``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from scars.core.advice.feature import advise_feature
from scars.core.errors import UsageError
from scars.core.formats.index_yaml import read_skip_record
from scars.core.gatekit.catalog import Gate
from scars.core.gatekit.evidence import Evidence
from scars.core.loops.samsara.catalog import (
    ROUND_CONTINUE,
    SAFETY_VALVE,
    SAMSARA_MAX_ROUNDS_REACHED,
    SAMSARA_NET_ROT_WARNING,
    SAMSARA_STAGNATION_WARNING,
)
from scars.core.loops.samsara.reader import feature_state
from scars.core.model import GROUP_LABEL, GROUPS, REGISTRY_FILE, Feature, ScarItem
from scars.core.samsara.aggregate import parse_failures_said
from scars.core.samsara.rounds import RULE_3, RoundFigures, Valve, remaining_items_listed, valves_after_round
from scars.core.samsara.session import FeatureSession, HeldFigures
from scars.core.sanitize import one_line

MAX_FILES_NAMED = 20


def open_read_only(path: Path) -> FeatureSession:

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
    known_figures: HeldFigures | None = None,
    **_: Any,
) -> Evidence:
    """``follow_state``: the round's decision point whichever it is now (the safety valve's when
    a valve fired, continue there being the override), not the gate asked for. ``known_figures``: a
    round gate's figures gathered before (its evidence's ``held``), used while they hold."""
    kw: dict[str, Any] = {"item": item, "blocked": blocked, "follow_state": follow_state, "known": known_figures}
    if session is not None:
        return _GATHER[gate.id](gate, session, **kw)
    with open_read_only(Path(path)) as own:
        return _GATHER[gate.id](gate, own, **kw)


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
    current = read_skip_record(Path(feature.path) / "index.yaml", feature_root(feature))
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


def _gather_round(
    gate: Gate,
    session: FeatureSession,
    *,
    follow_state: bool = False,
    known: HeldFigures | None = None,
    **_: Any,
) -> Evidence:
    feature = session.feature
    held = session.held_figures(known)
    fig = held.figures
    valves = valves_after_round(feature, session.decisions, fig)
    active = [v for v in valves if v.kind == "safety_valve" and v.active]
    if gate.id == "safety-valve" and not active:
        raise UsageError(
            f"{feature.name}: no safety valve is active for round {fig.round}; answer `scars gate round-continue` instead"
        )
    # The decision point follows the state: a fired valve makes it the safety valve's.
    point = SAFETY_VALVE if active else ROUND_CONTINUE
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
    ev.context.update(fig=fig, held=held, valves=[v.id for v in active], blocked=[it.id for it in blocked])
    return ev


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


def feature_root(feature: Feature) -> Path:
    """The tree a feature's files must stay in (safe_read's symlink rule): its repository."""
    return Path(feature.repo_root or feature.path)
