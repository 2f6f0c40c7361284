"""bkit's `pdca-continue` gate: evidence from pdca-status.json (and sprints), the answer recorded into it."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from scars.core.errors import PathNotFound, UsageError
from scars.core.gates.catalog import Answer, Gate
from scars.core.gates.evidence import Evidence, GateResult
from scars.core.gates.state_io import (
    check_unchanged,
    display_path,
    gate_result,
    load_json_state,
    record_entry,
    state_lock,
    write_json_state,
)
from scars.core.loops.base import LoopState, fmt_number
from scars.core.loops.bkit import (
    CRITICAL_MAX_ITERATIONS,
    NO_IMPROVEMENT_LIMIT,
    no_improvement_run,
    project_of,
    read_sprint,
    read_status,
    sprint_files,
    status_files,
)
from scars.core.samsara.session import FeatureSession
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
        raise PathNotFound(f"{p} does not exist")
    found = status_files(p)
    if found:
        return found[0], p
    for cand in (p / "pdca-status.json", p / ".pdca-status.json"):
        if cand.is_file():
            return cand, project_of(cand)
    raise PathNotFound(f"no bkit pdca-status.json at {p} (looked in .bkit/state/ and docs/)")


def _sprint_of(root: Path, feature: str) -> LoopState | None:
    """The first sprint (by file name) covering ``feature`` with a per-iteration history."""
    for path in sprint_files(root):
        sprint = read_sprint(path, root)
        if feature in sprint.details.get("features", ()) and sprint.points:
            return sprint
    return None


def gather_pdca(gate: Gate, path: Path, *, feature: str | None = None, **_: Any) -> Evidence:
    sf, root = locate_pdca(path)
    data, meta = load_json_state(sf, root)
    features = as_dict(data.get("features"))
    if feature is None:
        primary = data.get("primaryFeature")
        if isinstance(primary, str) and primary in features:
            feature = primary
        else:
            active = [
                f for f, v in features.items() if isinstance(v, dict) and v.get("phase") in ("do", "check", "act")
            ]
            if len(active) == 1:
                feature = active[0]
            else:
                raise UsageError(f"{sf}: name the feature with --feature (features: {', '.join(features) or 'none'})")
    if feature not in features or not isinstance(features[feature], dict):
        raise UsageError(f"{sf}: no feature {feature!r} (features: {', '.join(features) or 'none'})")
    # One rule, one place: the threshold, the limits and the pass and no-improvement rules are
    # the bkit reader's (scars.core.loops.bkit), so `scars loops` and this gate never disagree.
    states = read_status(sf, root)
    state = next((s for s in states if s.name == feature and s.status != "unreadable"), None)
    if state is None:
        problems = "; ".join(p.message for s in states for p in s.parse_failures) or "unreadable"
        raise UsageError(f"{sf}: the bkit reader cannot use this file ({problems})")
    d = state.details
    threshold, max_it = d["threshold"], state.budget.limit
    # the reader counts a missing iterationCount as 0 (its budget always has a count)
    rate, count, passes = d["match_rate"], state.budget.used or 0, d["match_rate_met"]
    config_file = root / "bkit.config.json"
    files = [display_path(sf, root)] + (["bkit.config.json"] if config_file.is_file() else [])
    warnings: list[str] = [str(p) for p in state.parse_failures]
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
    if state.budget.spent:
        warnings.append(
            f"iteration limit reached: {count} of max {max_it}" + (" (beyond the limit)" if state.budget.over else "")
        )
        reason_required.add("iterate")
    if count >= CRITICAL_MAX_ITERATIONS:
        refused["iterate"] = f"{count} iterations reached the critical maximum {CRITICAL_MAX_ITERATIONS}"
    if streak >= NO_IMPROVEMENT_LIMIT:
        warnings.append(f"no improvement for {streak} consecutive iterations: bkit stops with FAILURE")
        reason_required.add("iterate")
    thr_text = fmt_number(threshold)
    if passes:
        reason_required.add("iterate")
        overrides["stop"] = "proceed"
        advice = f"Match Rate {rate:g}% passes the {thr_text}% threshold: the loop completes with SUCCESS"
    elif state.budget.spent or streak >= NO_IMPROVEMENT_LIMIT:
        advice = "the loop's own rule stops here (FAILURE, or PARTIAL if you accept the gap)"
    else:
        advice = f"below the {thr_text}% threshold with iterations left: the loop would iterate again"
    rate_text = "not measured" if rate is None else f"{rate:g}%"
    figures = [
        ("feature", feature),
        ("phase", str(d["phase"])),
        ("Match Rate", f"{rate_text} (threshold {thr_text}%): {'pass' if passes else 'below'}"),
        ("trend", trend_text + ("" if sprint is not None else " (no per-iteration history on disk)")),
        ("iterations", f"{count} of max {max_it} (critical {CRITICAL_MAX_ITERATIONS})"),
        ("no-improvement streak", f"{streak} of {NO_IMPROVEMENT_LIMIT}"),
        ("last iteration status", str(d["last_iteration_status"])),
    ]
    prompt = gate.prompt.format(feature=feature, rate=rate_text, threshold=thr_text, count=count, max=max_it)
    # The entry's principle is the rule as configured here, not the defaults.
    principle = gate.principle.format(
        threshold=thr_text, max=max_it, critical=CRITICAL_MAX_ITERATIONS, no_improvement=NO_IMPROVEMENT_LIMIT
    )
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
            "loop_state": state,
            "sprint_state": sprint,
        },
        reason_required=reason_required,
        decision_overrides=overrides,
        refused=refused,
        advice=advice,
        default="stop" if passes else ("iterate" if "iterate" not in refused else "partial"),
    )


def apply_pdca(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    session: FeatureSession | None,
    source: str,
    now: str,
) -> GateResult:
    sf: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    name = ctx["feature"]
    with state_lock(sf.parent, user):
        check_unchanged(sf, ctx["meta"]["fp"])
        data = json.loads(json.dumps(ctx["data"]))
        f = data["features"][name]
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        extra: list[str] = []
        rate = ctx["rate"]
        rate_text = "unmeasured" if rate is None else f"{rate:g}%"
        if ans.value == "partial":
            # PARTIAL: the gap below the threshold is accepted; the feature moves on to the report.
            f["previousPhase"] = f.get("phase")
            f["phase"] = "report"
            f["lastIterationStatus"] = "partial"
            action = f"accepted as PARTIAL at Match Rate {rate_text} by {user} (scars gate): {reason}"
        elif ans.value == "stop":
            f["lastIterationStatus"] = "stopped"
            action = f"iteration stopped at Match Rate {rate_text} by {user} (scars gate): {reason}"
        if ans.value in ("partial", "stop"):
            if isinstance(f.get("timestamps"), dict):
                f["timestamps"]["lastUpdated"] = stamp
            if "lastUpdated" in data:
                data["lastUpdated"] = stamp
            hist = as_list(data.get("history"))
            hist.append(
                {"timestamp": stamp, "feature": name, "phase": f.get("phase"), "action": " ".join(action.split())}
            )
            data["history"] = hist[-BKIT_HISTORY_CAP:]
            extra.append(
                f"pdca-status.json: features.{name}.lastIterationStatus {f['lastIterationStatus']}"
                + (", phase report" if ans.value == "partial" else "")
                + "; history entry added"
            )
        ad_path, number = record_entry(evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        recorded = [ad_path]
        if ans.value in ("partial", "stop"):
            write_json_state(sf, data, ctx["meta"])
            recorded.append(sf)
    return gate_result(evidence, ans, reason, user, recorded, number, feature=name)
