"""bkit's gates: `pdca-continue` and `pdca-max-iterations` (a feature of pdca-status.json) and
`sprint-pause` (an auto-paused sprint, ``.bkit/state/sprints/<id>.json``).

Every write is a state bkit's own code accepts, reached by a transition it has:

* the feature gates move a feature only by bkit's state machine (lib/pdca/state-transitions.js,
  mirrored in :data:`scars.core.loops.bkit.TRANSITIONS`): the forced report is REPORT_DONE from
  check once ``guardMaxIterReached`` holds (from act through ANALYZE_DONE first), a stop is
  ABANDON (archived, ``archivedReason: abandoned``, out of ``activeFeatures``); each step is a
  ``state_transition`` history entry as ``recordTransition`` writes it, and ``phaseNumber`` is
  ``getPhaseNumber``'s. ``lastIterationStatus`` is the iterator's field and is never written.
  Every answer also appends a ``human_gate`` history entry (``addPdcaHistory`` takes any entry):
  the reader finds the answer there while the feature's state is the one it answered;
* the sprint gate resumes only as ``resumeSprint`` does (no armed trigger may still fire), moves a
  sprint only by its legal transitions (lib/application/sprint-lifecycle/transitions.js) and
  records the person's answer in ``annotations`` (append-only).
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scars.core.errors import OutsideRepository, PathNotFound, UsageError
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.gatekit.state_io import (
    check_unchanged,
    display_path,
    gate_result,
    load_json_state,
    plan_json_state,
    record_entry,
    state_lock,
)
from scars.core.loops.base import LoopState, as_number, fmt_number, parse_time
from scars.core.loops.bkit.reader import (
    AUTO_PAUSE_ACTIONS,
    GATE_HISTORY_ACTION,
    LEGACY_NOTICE,
    NO_IMPROVEMENT_LIMIT,
    PHASE_NUMBERS,
    SPRINT_NEXT_PHASE,
    SPRINTS_DIR,
    can_iterate,
    is_legacy_status,
    no_improvement_run,
    project_of,
    read_sprint,
    read_status,
    sprint_files,
    sprint_triggers,
    status_files,
    transition_path,
)
from scars.core.records import replace
from scars.core.storage import safe_read
from scars.core.storage.intent import Plan
from scars.core.values import as_dict, as_list

BKIT_HISTORY_CAP = 100  # pdca-status.json history[] is a ring buffer of 100 (formats.md §4.2)


def locate_pdca(path: Path) -> tuple[Path, Path]:
    """(pdca-status.json, project root) from the file, the project or its state directory."""
    p = Path(path)
    if p.is_file():
        if not p.name.endswith("pdca-status.json"):
            raise UsageError(f"{p} is not a bkit pdca-status.json")
        return p, project_of(p)
    if not p.exists():
        raise PathNotFound.missing(p)
    found = status_files(p)
    if found:
        return found[0], p
    for cand in (p / "pdca-status.json", p / ".pdca-status.json"):
        if cand.is_file():
            return cand, project_of(cand)
    raise PathNotFound(f"no bkit pdca-status.json at {p} (looked in .bkit/state/ and docs/)")


def _sprint_of(root: Path, feature: str) -> LoopState | None:
    """The first sprint (by file name) covering ``feature`` with a per-iteration history."""
    try:
        files = sprint_files(root)
    except safe_read.Unreadable:  # the sprints' folder leads out of the project: never read
        return None
    for path in files:
        sprint = read_sprint(path, root)
        if feature in sprint.details.get("features", ()) and sprint.points:
            return sprint
    return None


def _stamp() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _pick_feature(sf: Path, data: dict[str, Any], feature: str | None) -> str:
    features = as_dict(data.get("features"))
    if feature is None:
        primary = data.get("primaryFeature")
        if isinstance(primary, str) and primary in features:
            feature = primary
        else:
            active = [
                f for f, v in features.items() if isinstance(v, dict) and v.get("phase") in ("do", "check", "act")
            ]
            if len(active) != 1:
                raise UsageError(
                    f"{sf}: name the feature with --bkit-feature (features: {', '.join(features) or 'none'})"
                )
            feature = active[0]
    if feature not in features or not isinstance(features[feature], dict):
        raise UsageError(f"{sf}: no feature {feature!r} (features: {', '.join(features) or 'none'})")
    return feature


def gather_pdca(gate: Gate, path: Path, *, feature: str | None = None, **options: Any) -> Evidence:
    """The evidence of a feature gate. The threshold, the limit (the state machine's) and the
    pass and no-improvement rules are the bkit reader's (scars.core.loops.bkit), so `scars loops`
    and this gate never disagree; what an answer may do is bkit's state machine's."""
    if gate.id == "sprint-pause":
        return gather_sprint(gate, path, **options)
    sf, root = locate_pdca(path)
    if is_legacy_status(sf):
        raise UsageError(
            f"{display_path(sf, root)}: {LEGACY_NOTICE}. `scars loops` shows it; a gate is answered "
            "in the file the current bkit reads"
        )
    data, meta = load_json_state(sf, root)
    feature = _pick_feature(sf, data, feature)
    states = read_status(sf, root)
    state = next((s for s in states if s.name == feature and s.status != "unreadable"), None)
    if state is None:
        problems = "; ".join(p.message for s in states for p in s.parse_failures) or "unreadable"
        raise UsageError(f"{sf}: the bkit reader cannot use this file ({problems})")
    d = state.details
    threshold, limit = d["threshold"], state.budget.limit or 0
    # the reader counts a missing iterationCount as 0 (its budget always has a count)
    rate, count, passes, phase = d["match_rate"], state.budget.used or 0, d["match_rate_met"], d["phase"]
    config_file = root / "bkit.config.json"
    files = [display_path(sf, root)] + (["bkit.config.json"] if config_file.is_file() else [])
    # the file's own problems, which the reader says once (with its first feature), and this feature's
    said = list(dict.fromkeys([*d.get("file_problems", ()), *state.parse_failures]))
    warnings: list[str] = [str(p) for p in said]
    sprint = _sprint_of(root, feature)
    trend: list[float | None] = [p.value for p in sprint.points] if sprint is not None else []
    if sprint is not None:
        files.append(sprint.path)
    if not trend or (rate is not None and trend[-1] != rate):
        trend = trend + [rate]
    streak = no_improvement_run(trend)
    trend_text = " → ".join("unmeasured" if v is None else f"{v:g}%" for v in trend)
    refused: dict[str, str] = {}
    reason_required: set[str] = set()
    overrides: dict[str, str] = {}
    if rate is None:
        warnings.append("Match Rate not measured (null is never 100)")
    at_limit = not can_iterate(count, limit)  # bkit's guardMaxIterReached
    if at_limit:
        warnings.append(
            f"iteration limit reached: {count} of {limit}" + (" (beyond the limit)" if state.budget.over else "")
        )
    if streak >= NO_IMPROVEMENT_LIMIT:
        warnings.append(f"no improvement for {streak} consecutive iterations: bkit stops with FAILURE")
        reason_required.add("iterate")
    if d["answered_gate"]:
        a = d["answered_gate"]
        warnings.append(f"already answered {a.get('answer')} at the {a.get('gate')} gate by {a.get('decidedBy')}")
    if phase in ("report", "archived", "completed"):
        for value in gate.values:
            refused[value] = f"the feature is in phase {phase}: the PDCA iteration is over"
    # What bkit's state machine allows from here.
    report_steps, report_refusal = transition_path(phase, "REPORT_DONE", count, limit, rate, threshold)
    pass_steps, _ = transition_path(phase, "MATCH_PASS", count, limit, rate, threshold)
    if report_refusal:
        why = report_refusal
        if not at_limit:
            why += " (bkit reports below the threshold only once the iteration limit is reached)"
        refused.setdefault("partial", why)
        refused.setdefault("accept", why)
    if phase in ("check", "act"):
        if at_limit:
            refused.setdefault(
                "iterate",
                f"bkit's state machine refuses ITERATE at iterationCount {count} (guardCanIterate: below "
                f"{limit}, guardrails.loopBreaker.maxPdcaIterations): raise that limit in bkit.config.json "
                "for critical work, or answer the max-iterations question",
            )
    else:
        refused.setdefault("iterate", f"bkit iterates from check (ITERATE: check → act), not from {phase or 'idle'}")
    thr_text = fmt_number(threshold)
    if passes:
        reason_required.add("iterate")
        overrides["stop"] = "proceed"
        advice = f"Match Rate {rate:g}% passes the {thr_text}% threshold: the loop completes with SUCCESS"
    elif at_limit:
        advice = "the limit is reached below the threshold: bkit asks (manual fix, complete as-is, update design)"
    elif streak >= NO_IMPROVEMENT_LIMIT:
        advice = "no improvement for 3 iterations: the loop's own rule stops here (FAILURE)"
    else:
        advice = f"below the {thr_text}% threshold with iterations left: the loop would iterate again"
    rate_text = "not measured" if rate is None else f"{rate:g}%"
    figures = [
        ("feature", feature),
        ("phase", f"{phase} (phaseNumber {d['phase_number']})"),
        ("Match Rate", f"{rate_text} (threshold {thr_text}%): {'pass' if passes else 'below'}"),
        ("trend", trend_text + ("" if sprint is not None else " (no per-iteration history on disk)")),
        (
            "iterations",
            f"{count} of max {limit} (guardrails.loopBreaker.maxPdcaIterations; the iterator's "
            f"pdca.maxIterations {d['iterator_max']}, critical work up to {d['critical_limit']})",
        ),
        ("no-improvement streak", f"{streak} of {NO_IMPROVEMENT_LIMIT}"),
        ("last iteration status", str(d["last_iteration_status"])),
    ]
    if report_steps:
        figures.append(("forced report", " then ".join(f"{e} ({a} → {b})" for e, a, b in report_steps)))
    stop_steps = pass_steps if passes else [("ABANDON", str(phase or "idle"), "archived")]
    figures.append(("stop", " then ".join(f"{e} ({a} → {b})" for e, a, b in stop_steps)))
    if gate.id == "pdca-max-iterations":
        if not at_limit and "accept" not in refused:
            refused["accept"] = f"the iteration limit is not reached ({count} of {limit})"
        if not at_limit:
            warnings.append(f"bkit asks this question at the iteration limit ({count} of {limit} used)")
        prompt = gate.prompt.format(rate=rate_text, count=count, max=limit)
        default = "manual-fix"
    else:
        prompt = gate.prompt.format(feature=feature, rate=rate_text, threshold=thr_text, count=count, max=limit)
        default = "stop" if passes else ("iterate" if "iterate" not in refused else "partial")
    # Each gate refuses or asks a reason only for its own answers.
    refused = {k: v for k, v in refused.items() if k in gate.values}
    reason_required &= set(gate.values)
    # The entry's principle is the rule as configured here, not the defaults.
    principle = gate.principle.format(threshold=thr_text, max=limit, no_improvement=NO_IMPROVEMENT_LIMIT)
    return Evidence(
        gate=replace(gate, principle=principle),
        target=sf.parent,
        state_file=sf,
        workflow_prompt=prompt,
        figures=figures,
        warnings=warnings,
        files_read=files,
        context={
            "root": root,
            "decisions_dir": sf.parent,
            "data": data,
            "meta": meta,
            "feature": feature,
            "rate": rate,
            "count": count,
            "limit": limit,
            "report_steps": report_steps,
            "stop_steps": stop_steps,
            "loop_state": state,
            "sprint_state": sprint,
        },
        reason_required=reason_required,
        decision_overrides=overrides,
        refused=refused,
        advice=advice,
        default=default,
    )


def _transition(data: dict[str, Any], name: str, event: str, source: str, target: str, stamp: str) -> None:
    """One state-machine step as bkit writes it: the feature's phase and phaseNumber
    (updatePdcaStatus), its per-feature stateMachine when the file has one, the history entry of
    recordTransition."""
    f = data["features"][name]
    f["phase"] = target
    f["phaseNumber"] = PHASE_NUMBERS.get(target, 0)
    machine = f.get("stateMachine")
    if isinstance(machine, dict):
        machine["previousState"] = source
        machine["currentState"] = target
    _history(
        data,
        {"timestamp": stamp, "feature": name, "event": event, "from": source, "to": target}
        | {"action": "state_transition", "automationLevel": f.get("automationLevel")},
    )


def _history(data: dict[str, Any], entry: dict[str, Any]) -> None:
    hist = as_list(data.get("history"))
    hist.append(entry)
    data["history"] = hist[-BKIT_HISTORY_CAP:]


def _abandon(data: dict[str, Any], name: str, stamp: str) -> None:
    """ABANDON (any → archived): archiveAbandoned's fields, then cleanupFeature's removeActiveFeature."""
    f = data["features"][name]
    source = str(f.get("phase") or "idle")
    _transition(data, name, "ABANDON", source, "archived", stamp)
    f["archivedReason"] = "abandoned"
    if isinstance(f.get("timestamps"), dict):
        f["timestamps"]["archivedAt"] = stamp
    active = data.get("activeFeatures")
    if isinstance(active, list):
        data["activeFeatures"] = [a for a in active if a != name]
        if data.get("primaryFeature") == name:
            data["primaryFeature"] = data["activeFeatures"][0] if data["activeFeatures"] else None


def apply_pdca(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    now: str,
) -> GateResult:
    if evidence.gate.id == "sprint-pause":
        return apply_sprint(evidence, ans, reason, user=user, now=now)
    sf: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    name = ctx["feature"]
    with state_lock(sf.parent, user, root=evidence.context.get("root")):
        check_unchanged(sf, ctx["meta"]["fp"], ctx["meta"].get("root"))
        data = json.loads(json.dumps(ctx["data"]))
        f = data["features"][name]
        stamp = _stamp()
        extra: list[str] = []
        steps: list[str] = []
        if ans.value in ("partial", "accept"):
            for event, a, b in ctx["report_steps"]:
                _transition(data, name, event, a, b, stamp)
                steps.append(f"{event} ({a} → {b})")
        elif ans.value == "stop":
            for event, a, b in ctx["stop_steps"]:
                if event == "ABANDON":
                    _abandon(data, name, stamp)
                else:  # a passing Match Rate: the success path (MATCH_PASS: check → qa)
                    _transition(data, name, event, a, b, stamp)
                steps.append(f"{event} ({a} → {b})")
        if isinstance(f.get("timestamps"), dict):
            f["timestamps"]["lastUpdated"] = stamp
        if "lastUpdated" in data:
            data["lastUpdated"] = stamp
        _history(
            data,
            {
                "timestamp": stamp,
                "feature": name,
                "phase": f.get("phase"),
                "action": GATE_HISTORY_ACTION,
                "gate": evidence.gate.id,
                "answer": ans.value,
                "iterationCount": f.get("iterationCount"),
                "matchRate": f.get("matchRate"),
                "decidedBy": user,
            },
        )
        extra.append(
            f"pdca-status.json: features.{name}"
            + (f" through {', '.join(steps)}" if steps else ": no state change")
            + "; history entries added"
        )
        plan = Plan(sf.parent, root=evidence.context.get("root"))
        ad_path, number = record_entry(plan, evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        plan_json_state(plan, sf, data, ctx["meta"])
        plan.commit()
    return gate_result(evidence, ans, reason, user, [ad_path, sf], number, feature=name, transitions=steps)


# --------------------------------------------------------------------------- sprint-pause


# Each answer of the sprint gate and the user action of bkit's triggers it stands for.
SPRINT_ACTIONS: dict[str, tuple[str, ...]] = {
    "fix-resume": ("fix & resume",),
    "forward-fix": ("forward fix",),
    "carry-over": ("carry to next sprint",),
    "abort": ("abort sprint", "abort", "abort with partial report", "archive as-is"),
    "increase-budget": ("increase budget & resume",),
    "extend-timeout": ("extend timeout & resume",),
    "force-advance": ("force-advance phase",),
}


def locate_sprint(path: Path) -> tuple[Path, Path]:
    """(sprint file, project): the file itself, or the project's one paused (else firing) sprint."""
    p = Path(path)
    if p.is_file():
        if p.suffix != ".json":
            raise UsageError(f"{p} is not a bkit sprint file (.bkit/state/sprints/<id>.json)")
        return p, project_of(p)
    if not p.exists():
        raise PathNotFound.missing(p)
    try:
        files = sprint_files(p)
    except safe_read.Unreadable as exc:
        raise OutsideRepository(
            f"{p}: {exc}; nothing was read or written",
            link=str(p / SPRINTS_DIR),
            leads_to=os.path.realpath(p / SPRINTS_DIR),
        ) from None
    if not files:
        raise PathNotFound(f"no bkit sprint at {p} (looked in .bkit/state/sprints/)")
    waiting = [f for f in files if read_sprint(f, p).waiting_for_human]
    candidates = waiting or files
    if len(candidates) > 1:
        names = ", ".join(f.stem for f in candidates)
        raise UsageError(f"{p} holds several sprints ({names}); give the sprint file as PATH")
    return candidates[0], p


def gather_sprint(gate: Gate, path: Path, *, value: str | None = None, **_: Any) -> Evidence:
    sf, root = locate_sprint(path)
    data, meta = load_json_state(sf, root)
    sprint = read_sprint(sf, root)
    d = sprint.details
    firing = d["triggers_firing"]
    pause = d["pause"] or {}
    trigger = str(pause.get("trigger") or d["last_trigger"] or (firing[0]["trigger"] if firing else "none"))
    actions = list(as_list(pause.get("userActions")) or AUTO_PAUSE_ACTIONS.get(trigger, ()))
    offered = set(actions)
    for hit in firing:
        offered.update(hit["user_actions"])
    refused: dict[str, str] = {}
    for answer, names in SPRINT_ACTIONS.items():
        if not offered.intersection(names):
            refused[answer] = f"not an action of {trigger} (its actions: {' / '.join(actions) or 'none'})"
    if d["status"] in ("completed", "archived") or d["phase"] == "archived":
        for answer in SPRINT_ACTIONS:
            refused[answer] = f"the sprint is {d['status']}"
    number = as_number(value) if value is not None else None
    for answer, what in (("increase-budget", "tokens"), ("extend-timeout", "hours")):
        if answer not in refused and number is None:
            refused[answer] = f"give the new {what} with --value N"
    config = as_dict(data.get("config"))
    if "increase-budget" not in refused and number is not None and number <= (d["cumulative_tokens"] or 0):
        refused["increase-budget"] = (
            f"--value {fmt_number(number)} is not above the tokens used ({d['cumulative_tokens']})"
        )
    # Would bkit's resumeSprint accept the state each answer leaves? (no armed trigger may fire)
    for answer in ("fix-resume", "increase-budget", "extend-timeout", "force-advance", "forward-fix"):
        if answer in refused:
            continue
        still = sprint_triggers(_sprint_after(data, answer, number, "", _stamp()))
        if still:
            refused[answer] = f"bkit's resumeSprint refuses: {still[0]['trigger']} still fires ({still[0]['message']})"
    message = str(pause.get("message") or (firing[0]["message"] if firing else "no trigger fires"))
    prompt = gate.prompt.format(sprint=sprint.name, trigger=trigger, message=message, actions=" / ".join(actions))
    figures = [
        ("sprint", sprint.name),
        ("status", f"{d['status']} (phase {d['phase']})"),
        ("trigger", f"{trigger}: {message}"),
        ("user actions", " / ".join(actions) or "none recorded"),
        ("firing now", "; ".join(f"{h['trigger']}: {h['message']}" for h in firing) or "none"),
        (
            "match rate",
            f"{fmt_number(d['kpi_match_rate'])}% (target {fmt_number(d['target'])}%, min {fmt_number(d['min_acceptable'])}%)"
            if d["kpi_match_rate"] is not None
            else "not measured",
        ),
        ("iterations", sprint.budget.describe()),
        ("tokens", f"{fmt_number(d['cumulative_tokens'] or 0)} of {fmt_number(d['budget_tokens'])}"),
        ("phase timeout", f"{fmt_number(as_number(config.get('phaseTimeoutHours')) or 4)} h"),
    ]
    warnings = [str(p) for p in sprint.parse_failures]
    if not d["paused"]:
        warnings.append(f"the sprint is {d['status']}, not paused" + (" (a trigger fires)" if firing else ""))
    default = next((a for a in ("fix-resume", "forward-fix", "carry-over", "abort") if a not in refused), "abort")
    return Evidence(
        gate=gate,
        target=sf.parent,
        state_file=sf,
        workflow_prompt=prompt,
        figures=figures,
        warnings=warnings,
        files_read=[display_path(sf, root)],
        context={
            "root": root,
            # beside pdca-status.json (.bkit/state/), like the feature gates' entries
            "decisions_dir": sf.parent.parent if sf.parent.name == "sprints" else sf.parent,
            "data": data,
            "meta": meta,
            "value": number,
            "sprint": sf.stem,
            "trigger": trigger,
            "loop_state": sprint,
        },
        refused=refused,
        advice=f"{trigger}: bkit offers {' / '.join(actions) or 'no recorded action'}",
        default=default,
    )


def _sprint_after(data: dict[str, Any], answer: str, value: float | None, note: str, stamp: str) -> dict[str, Any]:
    """The sprint as ``answer`` leaves it (a copy)."""
    out = json.loads(json.dumps(data))
    config = out.setdefault("config", {})
    if answer == "increase-budget" and value is not None:
        config["budget"] = int(value) if float(value).is_integer() else value
    elif answer == "extend-timeout" and value is not None:
        config["phaseTimeoutHours"] = int(value) if float(value).is_integer() else value
    elif answer == "force-advance":
        phase = str(out.get("phase") or "prd")
        target = SPRINT_NEXT_PHASE.get(phase)
        history = [h for h in as_list(out.get("phaseHistory")) if isinstance(h, dict)]
        if history and not history[-1].get("exitedAt"):
            history[-1]["exitedAt"] = stamp
            entered = parse_time(history[-1].get("enteredAt"))
            left = parse_time(stamp)
            history[-1]["durationMs"] = int((left - entered).total_seconds() * 1000) if entered and left else None
        if target is not None:
            history.append({"phase": target, "enteredAt": stamp, "exitedAt": None, "durationMs": None})
            out["phase"] = target
        out["phaseHistory"] = history
    elif answer == "forward-fix":
        auto = out.setdefault("autoPause", {})
        armed = auto.get("armed") if isinstance(auto.get("armed"), list) else list(AUTO_PAUSE_ACTIONS)
        firing = {h["trigger"] for h in sprint_triggers(data) if "forward fix" in h["user_actions"]}
        auto["armed"] = [t for t in armed if t not in firing]
    if answer in ("carry-over", "abort"):
        out["phase"] = "archived"
        out["status"] = "archived"
        out["archivedAt"] = stamp
    else:
        out["status"] = "active"
    if note:
        notes = as_list(out.get("annotations"))
        notes.append({"at": stamp, "kind": "human_gate", "gate": "sprint-pause", "answer": answer, "note": note})
        out["annotations"] = notes
    return out


def apply_sprint(evidence: Evidence, ans: Answer, reason: str | None, *, user: str, now: str) -> GateResult:
    sf: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    with state_lock(Path(ctx["decisions_dir"]), user, root=evidence.context.get("root")):
        check_unchanged(sf, ctx["meta"]["fp"], ctx["meta"].get("root"))
        stamp = _stamp()
        features = ", ".join(map(str, as_list(ctx["data"].get("features"))))
        note = f"{ans.label} by {user} (scars gate): {reason or ans.consequence}"
        if ans.value == "carry-over":
            note += f"; carried to the next sprint: {features or 'no feature listed'}"
        data = _sprint_after(ctx["data"], ans.value, ctx["value"], note, stamp)
        extra = [f"{sf.name}: status {data.get('status')}, phase {data.get('phase')}; an annotation records the answer"]
        plan = Plan(Path(ctx["decisions_dir"]), root=evidence.context.get("root"))
        ad_path, number = record_entry(plan, evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        plan_json_state(plan, sf, data, ctx["meta"])
        plan.commit()
    return gate_result(evidence, ans, reason, user, [ad_path, sf], number, sprint=sf.stem, trigger=ctx["trigger"])
