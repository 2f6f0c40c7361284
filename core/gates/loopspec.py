"""loop-spec's `spec` gate (formats.md §2.2, §2.4, §2.6): evidence from feature.json, answers recorded into it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.errors import PathNotFound, UsageError
from scars.core.gates.catalog import GAP_PREFIX_SHIP, Answer, Gate
from scars.core.gates.evidence import Evidence, GateResult
from scars.core.gates.state_io import (
    append_bytes,
    check_unchanged,
    display_path,
    gate_result,
    load_json_state,
    record_entry,
    state_lock,
    utc_date,
    utc_now_z,
    write_feature_json,
)
from scars.core.loops.loopspec import UNATTENDED_STYLES, gap_id, parse_backlog, project_of, read_feature
from scars.core.samsara.session import FeatureSession
from scars.core.storage import safe_read
from scars.core.values import as_list

LOOP_SPEC_PHASES = ("spec", "discuss", "plan", "execute", "verify", "iterate", "deliver", "completed")


def locate_loop_spec(path: Path) -> Path:
    """feature.json from a file, a feature state directory or a project root."""
    p = Path(path)
    if p.is_file():
        if p.name != "feature.json":
            raise UsageError(f"{p} is not a loop-spec feature.json")
        return p
    if not p.exists():
        raise PathNotFound(f"{p} does not exist")
    if (p / "feature.json").is_file():
        return p / "feature.json"
    for base in (p / ".loop-spec" / "features", p / "features", p):
        found = sorted(base.glob("*/feature.json")) if base.is_dir() else []
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            slugs = ", ".join(f.parent.name for f in found)
            raise UsageError(f"{base} holds several loop-spec features ({slugs}); give the feature directory as PATH")
    raise PathNotFound(f"no loop-spec feature.json at {p} (give .loop-spec/features/<slug> or its feature.json)")


def gather_loop_spec(gate: Gate, path: Path, **_: Any) -> Evidence:
    """The evidence of the spec gate: the budget, the routes and the recorded gap are the
    loop-spec reader's (scars.core.loops.loopspec), so `scars loops` and this gate agree."""
    fj = locate_loop_spec(path)
    root = project_of(fj)
    data, meta = load_json_state(fj, root)
    loop = read_feature(fj, root)
    d = loop.details
    gap = d["recorded_gap"]
    desc = str(gap.get("description") or "gap") if gap else "gap"
    fix = str(gap.get("fix_first") or gap.get("description") or "gap") if gap else "gap"
    budget = loop.budget
    figures = [
        ("feature", str(d["slug"])),
        ("original goal", str(d["feature_title"] or "(none recorded)")),
        ("current phase", str(d["current_phase"])),
        ("exec style", str(d["exec_style"])),
        (
            "iterations",
            f"{budget.used} of {budget.limit} used{', confirmation used' if d['confirmation_used'] else ''}",
        ),
        ("last route", str(d["last_route"] or "(none)")),
        ("gap type", str(gap.get("type")) if gap else "(none)"),
        ("gap", desc),
        ("fix first", fix),
    ]
    if d["judge_summary"]:
        figures.append(("judge summary", str(d["judge_summary"])))
    warnings = [str(p) for p in loop.parse_failures]
    if gap is None:
        warnings.append("no gap is recorded in iterate.feedback or iterate.lastVerdict")
    elif gap.get("type") != "spec":
        warnings.append(f"the recorded gap is of type {gap.get('type')!r}, not 'spec'")
    if d["last_route"] not in (None, "spec"):
        warnings.append(f"the last recorded route is {d['last_route']!r}, not 'spec'")
    if d["exec_style"] in UNATTENDED_STYLES or d["autonomous"]:
        warnings.append("upstream proceeds without asking in auto / review-only / autonomous runs")
    refused = (
        {"ship": "no gap is recorded to ship with (iterate.feedback and lastVerdict.gap are empty)"}
        if gap is None
        else {}
    )
    return Evidence(
        gate=gate,
        target=fj.parent,
        state_file=fj,
        refused=refused,
        workflow_prompt=gate.prompt.format(gap=desc),
        figures=figures,
        warnings=warnings,
        files_read=[display_path(fj, root)],
        context={
            "root": root,
            "decisions_dir": fj.parent,
            "data": data,
            "meta": meta,
            "gap_desc": desc,
            "gap_fix": fix,
            "loop_state": loop,
        },
        default="reopen",
    )


def backlog_path(root: Path) -> Path:
    env = settings.current().loop_spec_backlog_file
    if env:
        return Path(env)
    return root / ".loop-spec" / "BACKLOG.md"


def backlog_add(path: Path, slug: str, text: str, gid: str) -> str:
    """Append an `iterate-gap` entry unless it exists (unchecked, same text or id) or is terminal."""
    try:  # the one read policy (storage/safe_read): a regular UTF-8 file of at most 8 MiB
        existing = safe_read.read_text(path, what="BACKLOG.md")
    except FileNotFoundError:
        existing = ""
    except safe_read.Unreadable as exc:
        raise UsageError(f"{path}: {exc}; the gap was not added to the backlog") from None
    entries, _ = parse_backlog(existing, str(path.name))
    for e in entries:
        if e.id == gid and e.terminal:
            return "terminal"
        if not e.done and (e.id == gid or e.text.strip() == " ".join(text.split())):
            return "exists"
    entry = f"- [ ] ({utc_date()} {slug} iterate-gap id={gid}) {' '.join(text.split())}\n"
    if not existing:
        data = "# BACKLOG.md\n\nDeferred work queue of loop-spec: one line per item, checked when done.\n\n" + entry
    else:
        data = ("" if existing.endswith("\n") else "\n") + entry
    path.parent.mkdir(parents=True, exist_ok=True)
    append_bytes(path, data.encode("utf-8"))
    return "added"


def _progress(fdir: Path, text: str) -> Path:
    path = fdir / "PROGRESS.md"
    existing = path.exists() and path.stat().st_size > 0
    prefix = ""
    if existing:
        with open(path, "rb") as f:
            f.seek(-1, os.SEEK_END)
            prefix = "" if f.read(1) == b"\n" else "\n"
    append_bytes(path, f"{prefix}- {utc_date()}: {' '.join(text.split())}\n".encode())
    return path


def apply_loop_spec(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    session: FeatureSession | None,
    source: str,
    now: str,
) -> GateResult:
    fj: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    fdir = fj.parent
    with state_lock(fdir, user):
        check_unchanged(fj, ctx["meta"]["fp"])
        data = json.loads(json.dumps(ctx["data"]))  # a copy to modify
        it = data.setdefault("iterate", {})
        desc, fix = ctx["gap_desc"], ctx["gap_fix"]
        recorded: list[Path] = []
        extra: list[str] = []
        warning = None
        if ans.value == "reopen":
            # Rewind: currentPhase -> spec, spec and every later phase leave completedPhases;
            # iterate.feedback keeps the gap so the re-entered phase fixes it first.
            data["currentPhase"] = "spec"
            if "currentPhaseStartedAt" in data:
                data["currentPhaseStartedAt"] = None
            if isinstance(data.get("completedPhases"), list):
                data["completedPhases"] = [p for p in data["completedPhases"] if p not in LOOP_SPEC_PHASES]
            it["lastRoute"] = "spec"
            extra.append("feature.json: currentPhase spec, completedPhases rewound")
        elif ans.value == "ship":
            # Ship as-is: deliver, the gap kept visible in warnings[] and on the backlog.
            warning = f"{GAP_PREFIX_SHIP} {desc} — fix first: {fix}"
            warns = as_list(data.get("warnings"))
            if warning not in warns:
                warns.append(warning)
            data["warnings"] = warns
            data["currentPhase"] = "deliver"
            if "currentPhaseStartedAt" in data:
                data["currentPhaseStartedAt"] = None
            done = as_list(data.get("completedPhases"))
            if "iterate" not in done:
                done.append("iterate")
            data["completedPhases"] = done
            it["feedback"] = None
            it["lastRoute"] = "deliver"
            extra.append("feature.json: currentPhase deliver, the gap in warnings[] and on the backlog")
        if ans.value in ("reopen", "ship") and "updatedAt" in data:
            data["updatedAt"] = utc_now_z()
        ad_path, number = record_entry(evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        recorded.append(ad_path)
        if ans.value in ("reopen", "ship"):
            recorded.extend(write_feature_json(fj, data, ctx["meta"]))
        if ans.value == "ship":
            bl = backlog_path(ctx["root"])
            slug = str(data.get("slug") or fdir.name)
            if backlog_add(bl, slug, f"{desc} — fix first: {fix}", gap_id(fix)) == "added":
                recorded.append(bl)
        label = {"reopen": "re-open SPEC/DISCUSS", "ship": "ship as-is", "stop": "stop - hand back"}[ans.value]
        recorded.append(_progress(fdir, f"ITERATE spec gate: {label} (decision-{number:03d}, {user} via scars gate)"))
    return gate_result(evidence, ans, reason, user, recorded, number, **({"warning": warning} if warning else {}))
