"""samsara's gates: entry, triage, round-continue, safety-valve, blocked-fix.

Evidence is read through ``FeatureSession`` (the feature, the journal's decisions and the open
round) and ``scars.core.samsara.rounds.evaluate_valves``; answers are recorded under the feature's
writer lock: the auto-decisions.md entry through ``FeatureSession.append_auto_decision``, then
the loop's own state:

* ``entry`` — ``skip`` writes ``iteration_skip_record: "<one-line record>"`` at the top level of
  index.yaml; ``enter`` removes it (the record is reversible). A text edit of that one line,
  atomic, every other byte of index.yaml kept.
* ``round-continue`` / ``safety-valve`` — ``FeatureSession.close_round`` writes the round with
  its decision (continue / stop / forced_stop) and decision_reason into iteration-log.yaml.
* ``blocked-fix`` — ``FeatureSession.record_blocked_fix`` (retry_with_context /
  reclassify_as_defer, logged with the round).
* ``triage`` — the item decisions (``FeatureSession.decide``) and one entry summarising them.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from scars.core.clock import now_iso
from scars.core.errors import ChangedOnDisk, DecisionRefused, FieldError, UsageError
from scars.core.gates.answers import AnswersFile
from scars.core.gates.catalog import (
    GATES,
    SAMSARA_MAX_ROUNDS_WARNING,
    SAMSARA_NET_ROT_WARNING,
    SAMSARA_STAGNATION_WARNING,
    Answer,
    Gate,
)
from scars.core.gates.evidence import Evidence, GateResult, entry_fields, validate_answer
from scars.core.gates.state_io import loop_extra
from scars.core.loops.samsara import feature_state
from scars.core.model import GROUP_LABEL, GROUPS, REGISTRY_FILE, IterationLog, Round
from scars.core.samsara.decisions import validate_decision
from scars.core.samsara.rounds import evaluate_valves
from scars.core.samsara.session import FeatureSession
from scars.core.sanitize import one_line
from scars.core.storage.durable import atomic_write, read_with_fingerprint
from scars.core.text import generic_reason_problem

SKIP_KEY = "iteration_skip_record"
MAX_FILES_NAMED = 20
MAX_ITEMS_IN_PROMPT = 15


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


def _common(feature) -> list[tuple[str, str]]:
    counts = feature.counts or {}
    by_cat = ", ".join(f"{k} {v}" for k, v in counts.items())
    return [
        ("feature", feature.name),
        ("signal_lost", f"{feature.signal_lost}" + (f" ({by_cat})" if by_cat else "")),
        ("cross-task patterns", str(len(feature.cross_task_patterns))),
        ("parse failures", str(len(feature.parse_failures))),
    ]


def _failure_warnings(feature) -> list[str]:
    out = []
    for pf in feature.parse_failures[:10]:
        where = f"{pf.file}:{pf.line}" if pf.line else pf.file
        # The registry holds no items: its refs stay counted as unknown (formats.md §1.7).
        what = "systemic refs unknown, still counted" if pf.of_registry else "items not counted"
        out.append(f"parse failure ({what}): {where}: {pf.reason}")
    if len(feature.parse_failures) > 10:
        out.append(f"and {len(feature.parse_failures) - 10} more parse failures")
    for file, ref in feature.dangling_refs[:10]:
        out.append(f"dangling systemic_ref {ref} in {file}")
    return out


def _valves(feature, decisions, fig: dict[str, Any] | None = None):
    """The valves as the loop checks them after this round: the open round counted as done."""
    from dataclasses import replace

    if fig is not None:
        pseudo = Round(
            round=fig["round"],
            signal_lost_before=fig["before"],
            signal_lost_after=fig["after"],
            fixes_scar_count=fig["new"],
            decision="pending",
        )
        log = feature.iteration_log
        if log is None:
            log = IterationLog(file="iteration-log.yaml", max_rounds=fig["max_rounds"] or 3)
        rounds = tuple(r for r in log.rounds if r.round != fig["round"]) + (pseudo,)
        feature = replace(feature, iteration_log=replace(log, rounds=rounds))
    return evaluate_valves(feature, decisions)


def _round_figures(session: FeatureSession) -> dict[str, Any]:
    feature = session.feature
    open_round = session.open_round()
    if not open_round:
        raise UsageError(
            f"{feature.name}: no round is open — there is nothing to continue or stop "
            "(start one with `scars round start`)"
        )
    number = open_round.get("round")
    before = open_round.get("signal_lost_before")
    after = feature.signal_lost
    triage = session.round_triage()
    resolved = {it.id for it in feature.resolved}
    fixed = sum(1 for i, d in triage.items() if d.action == "fix" and i in resolved)
    remaining = sum(1 for it in feature.items if it.counted)
    start_ids = set(open_round.get("item_ids") or ())
    new = sum(1 for it in feature.items if it.counted and it.id not in start_ids)
    return {
        "round": number,
        "before": before,
        "after": after,
        "fixed": fixed,
        "remaining": remaining,
        "triaged": len(triage),
        "max_rounds": open_round.get("max_rounds"),
        "new": new,
    }


def _valve_warning(v, fig: dict[str, Any]) -> str:
    """The upstream warning text of an active safety valve, figures filled in."""
    f = v.figures or {}
    if v.id == "stagnation":
        rounds = f.get("rounds") or []
        b = rounds[0].get("before") if rounds else fig.get("before")
        a = rounds[-1].get("after") if rounds else fig.get("after")
        return SAMSARA_STAGNATION_WARNING.format(before=b, after=a)
    if v.id == "net_rot":
        return SAMSARA_NET_ROT_WARNING.format(new=f.get("new"), resolved=f.get("resolved"))
    if v.id == "max_rounds":
        return SAMSARA_MAX_ROUNDS_WARNING.format(max_rounds=f.get("max_rounds"))
    return v.message


def gather(
    gate: Gate,
    path: Path,
    *,
    session: FeatureSession | None = None,
    item: str | None = None,
    blocked: str | None = None,
    **_: Any,
) -> Evidence:
    if session is not None:
        return _GATHER[gate.id](gate, session, item=item, blocked=blocked)
    with _open_read_only(Path(path)) as own:
        return _GATHER[gate.id](gate, own, item=item, blocked=blocked)


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
    current = _index_value(Path(feature.path) / "index.yaml")
    if current:
        figures.append(("skip record on file", current))
    warnings = _failure_warnings(feature)
    if verdict == "unknown":
        warnings.insert(
            0, "entry verdict unknown (an input file could not be used): never default-skip; the gate decides"
        )
    advice = {
        "gate": "the entry criterion holds (cross-task pattern or signal_lost >= 5): the loop asks whether to enter",
        "skip": "the criterion does not hold: the loop would default-skip with a reversible record",
        "unknown": "parse failures make the verdict unknown: decide between iteration and validate-and-ship",
    }.get(verdict)
    prompt = gate.prompt.format(
        signal_lost=feature.signal_lost,
        patterns=len(feature.cross_task_patterns),
        failures=len(feature.parse_failures),
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
    )
    ev.context.update(
        verdict=verdict,
        record=feature.entry.record if feature.entry else "",
        signal_lost=feature.signal_lost,
        patterns=len(feature.cross_task_patterns),
        failures=len(feature.parse_failures),
    )
    return ev


def _gather_round(gate: Gate, session: FeatureSession, **_: Any) -> Evidence:
    feature = session.feature
    fig = _round_figures(session)
    valves = _valves(feature, session.decisions, fig)
    active = [v for v in valves if v.kind == "safety_valve" and v.active]
    watch = [v for v in valves if v.kind == "watch_for" and v.active]
    prompt = gate.prompt.format(**fig)
    figures = _common(feature) + [
        ("round", f"{fig['round']} of {fig['max_rounds'] or '?'}"),
        ("signal_lost this round", f"{fig['before']} → {fig['after']}"),
        (
            "fixed / remaining",
            f"{fig['fixed']} fixed, {fig['remaining']} remaining ({fig['triaged']} triaged this round)",
        ),
    ]
    warnings = [f"safety valve {v.id}: {_valve_warning(v, fig)}" for v in active]
    warnings += [f"watch-for {v.id}: {v.message}" for v in watch]
    near = [v for v in valves if v.kind == "safety_valve" and v.near and not v.active]
    warnings += [f"near safety valve {v.id}: {v.message}" for v in near]
    ev = _base(gate, session, prompt, figures, warnings, default="stop" if active else "continue")
    if gate.id == "safety-valve":
        if not active:
            raise UsageError(
                f"{feature.name}: no safety valve is active for round {fig['round']}; "
                "answer `scars gate round-continue` instead"
            )
        lines = [_valve_warning(v, fig) for v in active]
        ev.workflow_prompt = "\n".join(lines) + "\n\n" + prompt
        ev.advice = "the safety valve suggests stopping; it is advisory — the gate decides"
        ev.default = "stop"
    elif active:
        ev.reason_required.add("continue")
        ev.advice = (
            f"safety valve(s) {', '.join(v.id for v in active)} fired: continuing needs a reason "
            "(or answer `scars gate safety-valve`)"
        )
    ev.context.update(fig=fig, valves=[v.id for v in active])
    return ev


def _blocked_reason(feature, item) -> str | None:
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
    d = session.decisions.get(item)
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
    prompt = gate.prompt.format(description=it.text, reason=reason)
    ev = _base(gate, session, prompt, figures, warnings, default="retry")
    if d is None or d.action != "fix":
        for a in gate.answers:
            ev.refused[a.value] = f"item {it.id} is not decided fix"
    ev.files_read.insert(0, f"{it.file} (item {it.id})")
    ev.context.update(item=it.id)
    return ev


def _triage_groups(feature, decisions) -> tuple[str, dict[str, int]]:
    by_id = {it.id: it for it in feature.items}
    parts = []
    for g in GROUPS:
        ids = [i for i in (feature.groups or {}).get(g, ()) if i in by_id]
        parts.append(f"{GROUP_LABEL[g]}:")
        for i in ids[:MAX_ITEMS_IN_PROMPT]:
            parts.append(f"  - {one_line(by_id[i].text, 120)}")
        if len(ids) > MAX_ITEMS_IN_PROMPT:
            parts.append(f"  - … and {len(ids) - MAX_ITEMS_IN_PROMPT} more")
        parts.append("")
    counts = {"fix": 0, "accept": 0, "defer": 0}
    for it in feature.items:
        d = decisions.get(it.id)
        if d is not None and d.action in counts:
            counts[d.action] += 1
    return "\n".join(parts), counts


def _gather_triage(gate: Gate, session: FeatureSession, **_: Any) -> Evidence:
    feature = session.feature
    groups, counts = _triage_groups(feature, session.decisions)
    counted = [it for it in feature.items if it.counted]
    undecided = sum(1 for it in counted if it.id not in session.decisions)
    prompt = gate.prompt.format(count=len(counted), signal_lost=feature.signal_lost, groups=groups)
    figures = _common(feature) + [
        ("decided", f"fix {counts['fix']}, accept {counts['accept']}, defer {counts['defer']}"),
        ("undecided", str(undecided)),
    ]
    ev = _base(gate, session, prompt, figures, _failure_warnings(feature), default="done")
    ev.context.update(counts=counts, undecided=undecided, total=len(counted))
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


def _index_value(path: Path) -> str | None:
    try:
        import yaml

        data = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return None
    if isinstance(data, dict) and data.get(SKIP_KEY) is not None:
        return str(data.get(SKIP_KEY))
    return None


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
    if text and not text.endswith("\n"):
        text += "\n"
    return text + new_line


def write_skip_record(index_path: Path, value: str | None, feature_name: str) -> bool:
    """Set or remove the record in index.yaml; True when the file changed. Checked by a re-read."""
    import yaml

    raw, fp = read_with_fingerprint(index_path)
    text = raw.decode("utf-8") if raw is not None else ""
    if raw is None:
        if value is None:
            return False
        text = f"feature: {_yaml_quote(feature_name)}\n"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        before = yaml.load(text, Loader=loader) if text.strip() else {}
    except yaml.YAMLError as exc:
        raise UsageError(
            f"{index_path} is not valid YAML ({str(exc).splitlines()[0]}); the skip record was not written"
        ) from None
    if before is None:
        before = {}
    if not isinstance(before, dict):
        raise UsageError(f"{index_path} is not a mapping; the skip record was not written")
    new = edit_skip_record(text, value)
    if new == text and raw is not None:
        return False
    after = yaml.load(new, Loader=loader)
    expected = {k: v for k, v in before.items() if k != SKIP_KEY}
    got = {k: v for k, v in (after or {}).items() if k != SKIP_KEY}
    if got != expected or (after or {}).get(SKIP_KEY) != (" ".join(value.split()) if value is not None else None):
        raise UsageError(f"{index_path}: the skip record could not be edited safely; nothing was written")
    if raw is not None:
        again, fp2 = read_with_fingerprint(index_path)
        if fp2 is None or not fp2.same_content(fp):
            raise ChangedOnDisk(f"{index_path} changed on disk while the gate wrote it; nothing was written")
    atomic_write(index_path, new.encode("utf-8"))
    return True


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------


def _append_entry(
    session: FeatureSession,
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    extra: list[str] | None = None,
    rationale: str | None = None,
) -> int:
    fields = entry_fields(
        evidence, ans, reason, user=user, source=source, now=now_iso(), extra_consequences=extra, rationale=rationale
    )
    fields.pop("timestamp", None)
    return session.append_auto_decision(**fields)


def _result(
    evidence: Evidence, ans: Answer, reason: str | None, user: str, recorded: list[str], number: int, **extra: Any
) -> GateResult:
    seen: list[str] = []
    for r in recorded:
        if r not in seen:
            seen.append(r)
    return GateResult(
        gate=evidence.gate.id,
        answer=ans.value,
        decision=evidence.decision_for(ans),
        reason=reason,
        decided_by=user,
        recorded=seen,
        entry_number=number,
        extra={**loop_extra(evidence), **extra},
    )


def _apply_entry(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str
) -> GateResult:
    ctx = ev.context
    index = Path(session.feature.path) / "index.yaml"
    if ans.value == "skip":
        if ctx["verdict"] == "skip" and ctx.get("record"):
            line = f"{ctx['record']} — confirmed by {user}" + (f": {reason}" if reason else "")
        else:
            line = (
                f"signal_lost={ctx['signal_lost']}, {ctx['patterns']} cross-task pattern(s), "
                f"{ctx['failures']} parse failure(s), iteration skipped by {user}: {reason} (reply to override)"
            )
        extra = [f"index.yaml: {SKIP_KEY} written (reversible: answer enter to remove it)"]
    else:
        line = None
        extra = [f"index.yaml: {SKIP_KEY} removed"] if _index_value(index) is not None else []
    number = _append_entry(session, ev, ans, reason, user=user, source=source, extra=extra)
    recorded = ["auto-decisions.md"]
    if write_skip_record(index, line, session.feature.name):
        recorded.append("index.yaml")
    return _result(ev, ans, reason, user, recorded, number, **({"skip_record": line} if line else {}))


def _apply_round(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str
) -> GateResult:
    fig = ev.context["fig"]
    valves = ev.context.get("valves") or []
    trigger = None
    if ans.value == "continue":
        decision = "continue"
        why = (
            reason
            or f"user chose to continue: signal_lost {fig['before']} → {fig['after']}, {fig['remaining']} remaining"
        )
        if valves:
            why = f"continue despite safety valve {', '.join(valves)}: {why}"
    else:
        if ev.gate.id == "safety-valve" and "max_rounds" in valves:
            decision, trigger = "forced_stop", "max_rounds"
        else:
            decision = "stop"
            if ev.gate.id == "safety-valve" and valves:
                trigger = valves[0]
        why = (
            reason or f"user chose to stop: signal_lost {fig['before']} → {fig['after']}, {fig['remaining']} remaining"
        )
        if valves and ev.gate.id == "safety-valve":
            names = {"max_rounds": "max rounds", "stagnation": "stagnation", "net_rot": "net rot"}
            why = f"safety valve {', '.join(names.get(v, v) for v in valves)}: {why}"
    extra = [f"iteration-log.yaml: round {fig['round']} decision {decision}"]
    number = _append_entry(session, ev, ans, reason, user=user, source=source, extra=extra, rationale=why)
    kwargs: dict[str, Any] = {"auto_entry": False}
    if decision == "forced_stop" and trigger:
        kwargs["trigger"] = trigger
    session.close_round(decision, why, **kwargs)
    return _result(
        ev,
        ans,
        reason,
        user,
        ["auto-decisions.md", "iteration-log.yaml", ".scars/journal.jsonl"],
        number,
        round=fig["round"],
        round_decision=decision,
    )


def _apply_blocked(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str
) -> GateResult:
    item = ev.context["item"]
    outcome = "retry_with_context" if ans.value == "retry" else "reclassify_as_defer"
    number = _append_entry(
        session,
        ev,
        ans,
        reason,
        user=user,
        source=source,
        extra=[f"blocked-fix outcome {outcome} for {item} (journal; logged with the round)"],
    )
    session.record_blocked_fix(item, outcome, reason)
    return _result(
        ev, ans, reason, user, ["auto-decisions.md", ".scars/journal.jsonl"], number, item=item, outcome=outcome
    )


def _apply_triage(
    session: FeatureSession, ev: Evidence, ans: Answer, reason: str | None, user: str, source: str
) -> GateResult:
    c = ev.context["counts"]
    undecided = ev.context["undecided"]
    summary = f"fix {c['fix']}, accept {c['accept']}, defer {c['defer']} of {ev.context['total']} items"
    if undecided:
        ev.decision_overrides["done"] = "revise"
    answer = Answer(
        ans.value,
        ans.key,
        f"Triage recorded: {summary}" + (f"; {undecided} undecided" if undecided else ""),
        ans.decision,
        ans.needs_reason,
        ans.consequence if not undecided else f"re-run triage: {undecided} items are still undecided",
    )
    number = _append_entry(
        session,
        ev,
        answer,
        reason,
        user=user,
        source=source,
        rationale=reason or f"{user} triaged the remaining items: {summary}",
    )
    return _result(ev, ans, reason, user, ["auto-decisions.md"], number, counts=dict(c), undecided=undecided)


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
    source: str,
    now: str,
) -> GateResult:
    if session is None or getattr(session, "read_only", True):
        raise UsageError("a samsara gate records under a writable FeatureSession")
    return _APPLY[evidence.gate.id](session, evidence, ans, reason, user, source)


def _writable(path: Path, user: str) -> FeatureSession:

    return FeatureSession.open(path, user=user)


def _options_for(evidence: Evidence) -> dict[str, Any]:
    return {"item": evidence.context.get("item"), "blocked": evidence.context.get("blocked")}


def record(evidence: Evidence, answer_text: str, reason: str | None, *, user: str, source: str) -> GateResult:
    """Take the lock, re-read the evidence under it (state may have moved), validate, record."""
    gate = evidence.gate
    with _writable(evidence.target, user) as session:
        fresh = gather(
            gate, evidence.target, session=session, item=evidence.context.get("item"), blocked=_blocked_option(evidence)
        )
        ans, reason = validate_answer(fresh, answer_text, reason)
        return apply(fresh, ans, reason, user=user, session=session, source=source, now=now_iso())


def _blocked_option(evidence: Evidence) -> str | None:
    for label, value in evidence.figures:
        if label == "blocked because" and not value.startswith("(the implementer"):
            return value
    return None


def record_triage(evidence: Evidence, *, user: str, source: str) -> GateResult | None:
    gate = GATES["triage"]
    with _writable(evidence.target, user) as session:
        fresh = gather(gate, evidence.target, session=session)
        c = fresh.context["counts"]
        if not any(c.values()):
            return None
        ans = gate.answers[0]
        return apply(fresh, ans, None, user=user, session=session, source=source, now=now_iso())


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
    path: str | os.PathLike[str], af: AnswersFile, *, user: str, options: dict[str, Any], source: str
) -> list[GateResult]:
    feature_dir = Path(path)
    errors: list[str] = []
    plan: list[tuple[str, dict[str, Any]]] = []
    # 1. Validate everything against a read-only view (no lock, no file touched).
    with _open_read_only(feature_dir) as ro:
        errors.extend(_validate_items(ro, af.items))
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
                if gid in ("round-continue", "safety-valve") and (af.items or "triage" in af.gates):
                    # Its figures depend on the decisions replayed first; checked again before writing.
                    ans = GATES[gid].answer(e.get("answer") or "")
                    if ans is None:
                        errors.append(
                            f"{gid}: {e.get('answer')!r} is not a valid answer; valid answers: "
                            f"{GATES[gid].valid_answers_text()}"
                        )
                    elif ans.needs_reason or gid == "safety-valve":
                        problem = (
                            generic_reason_problem(e.get("reason"), GATES[gid])
                            if (ans.needs_reason or e.get("reason"))
                            else None
                        )
                        if problem:
                            errors.append(f"{gid}: {problem}")
                    try:
                        _round_figures(ro)
                    except UsageError as exc:
                        errors.append(f"{gid}: {exc}")
                    plan.append((gid, {**e, **opts}))
                    continue
                try:
                    ev = gather(GATES[gid], feature_dir, session=ro, item=opts.get("item"), blocked=opts.get("blocked"))
                    if gid == "blocked-fix" and (af.items.get(opts.get("item") or "") or {}).get("action") == "fix":
                        ev.refused.clear()  # decided fix by this same file, before the blocked-fix step
                    validate_answer(ev, e.get("answer"), e.get("reason"))
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
    with _writable(feature_dir, user) as session:
        for gid, e in plan:
            if gid == "triage":
                for item_id, entry in af.items.items():
                    fields = {k: v for k, v in entry.items() if k != "action"}
                    session.decide(item_id, entry["action"], **fields)
            ev = gather(GATES[gid], feature_dir, session=session, item=e.get("item"), blocked=e.get("blocked"))
            ans, reason = validate_answer(ev, e.get("answer"), e.get("reason"))
            results.append(apply(ev, ans, reason, user=user, session=session, source=source, now=now_iso()))
    return results
