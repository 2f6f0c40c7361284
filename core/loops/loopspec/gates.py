"""loop-spec's `spec` and `escalate` gates (formats.md §2.2, §2.4, §2.6; seed 004): evidence from
feature.json, answers recorded into it — and into the graph engine's own files, so that
``lib/graph/run.sh --step --resume`` continues where the answer says.

The SPEC gate is the graph node ``human.iterate-spec-approval`` (graph/cycle.graph.json): the
engine pauses there (``graph-pause.json``) and, on resume, continues at the paused node's successor,
which is always DISCUSS. An answer consumes the pause record (as the engine does on resume) and
appends one record to the engine's checkpoint ledger (``graph-checkpoints.jsonl``, the engine's
format) naming the node whose successor the engine computes next:

* reopen — the SPEC gate node itself: its successor is DISCUSS (refinement toward the goal);
* ship — ITERATE: with ``iterate.feedback`` cleared its routes lead to DELIVER;
* stop — ITERATE: its verdict routes to the SPEC gate again, so a resume asks again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from scars.core import settings
from scars.core.errors import OutsideRepository, PathNotFound, UsageError
from scars.core.gatekit.catalog import Answer, Gate
from scars.core.gatekit.evidence import Evidence, GateResult
from scars.core.gatekit.state_io import (
    check_unchanged,
    display_path,
    gate_result,
    load_json_state,
    plan_feature_json,
    record_entry,
    state_lock,
    utc_date,
    utc_now_z,
)
from scars.core.git import current_commit
from scars.core.loops.loopspec.reader import (
    ESCALATE_GATE,
    GRAPH_LEDGER,
    GRAPH_PAUSE,
    ITERATE_NODE,
    SPEC_GATE_NODE,
    UNATTENDED_STYLES,
    backlog_text,
    gap_id,
    gap_parts,
    gap_warning,
    parse_backlog,
    posix_cksum,
    project_of,
    read_feature,
)
from scars.core.storage import safe_read
from scars.core.storage.intent import Plan
from scars.core.values import as_list

LOOP_SPEC_PHASES = ("spec", "discuss", "plan", "execute", "verify", "iterate", "deliver", "completed")
# A reopen rewinds to DISCUSS refinement: DISCUSS and every later phase leave completedPhases.
REOPEN_PHASE = "discuss"


def locate_loop_spec(path: Path) -> Path:
    """feature.json from a file, a feature state directory or a project root."""
    p = Path(path)
    if p.is_file():
        if p.name != "feature.json":
            raise UsageError(f"{p} is not a loop-spec feature.json")
        return p
    if not p.exists():
        raise PathNotFound.missing(p)
    if (p / "feature.json").is_file():
        return p / "feature.json"
    for base in (p / ".loop-spec" / "features", p / "features", p):
        try:  # a folder leading out of the path given is never listed (the read rule)
            names = safe_read.list_dir(base, root=p, what="the folder") if base.is_dir() else []
        except safe_read.Unreadable as exc:
            raise OutsideRepository(
                f"{base}: {exc}; nothing was read or written", link=str(base), leads_to=os.path.realpath(base)
            ) from None
        found = sorted(f for f in (base / n / "feature.json" for n in names) if f.is_file())
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            slugs = ", ".join(f.parent.name for f in found)
            raise UsageError(f"{base} holds several loop-spec features ({slugs}); give the feature directory as PATH")
    raise PathNotFound(f"no loop-spec feature.json at {p} (give .loop-spec/features/<slug> or its feature.json)")


def _gaps(d: dict[str, Any]) -> list[dict[str, Any]]:
    """The gaps a ship records: the recorded gap, then the last verdict's remaining gaps (as
    harvest takes them), each once."""
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    last = d.get("last_verdict") if isinstance(d.get("last_verdict"), dict) else {}
    candidates = [d["recorded_gap"], *(last.get("remaining_gaps") or [] if isinstance(last, dict) else [])]
    for gap in candidates:
        if not isinstance(gap, dict):
            continue
        key = gap_id(gap_parts(gap)[1])
        if key not in seen:
            seen.add(key)
            out.append(gap)
    return out


def _reopen_undoes(data: dict[str, Any]) -> list[str]:
    """What a reopen undoes, in the words of the state it changes."""
    undone = []
    phases = [p for p in as_list(data.get("completedPhases")) if p in _AFTER_REOPEN]
    undone.append(
        "completedPhases loses " + ", ".join(map(str, phases)) if phases else "completedPhases: nothing to undo"
    )
    if data.get("specApproval"):
        undone.append("the Goal and Boundary freeze (specApproval) is retired into specApprovalHistory")
    if data.get("specIntentSeen"):
        undone.append("specIntentSeen is cleared (DISCUSS shows the intent again)")
    undone.append(f"currentPhase {data.get('currentPhase')!s} → {REOPEN_PHASE}")
    return undone


_AFTER_REOPEN = LOOP_SPEC_PHASES[LOOP_SPEC_PHASES.index(REOPEN_PHASE) :]


def gather_loop_spec(gate: Gate, path: Path, **_: Any) -> Evidence:
    """The evidence of the spec and escalate gates: the budget, the routes and the recorded gap are
    the loop-spec reader's (scars.core.loops.loopspec), so `scars loops` and this gate agree."""
    fj = locate_loop_spec(path)
    root = project_of(fj)
    data, meta = load_json_state(fj, root)
    loop = read_feature(fj, root)
    d = dict(loop.details)
    d["last_verdict"] = (
        (data.get("iterate") or {}).get("lastVerdict") if isinstance(data.get("iterate"), dict) else None
    )
    gap = d["recorded_gap"]
    desc, fix = gap_parts(gap)
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
        ("gap", desc if gap else "(none recorded)"),
        ("fix first", fix if gap else "(none recorded)"),
    ]
    if d["judge_summary"]:
        figures.append(("judge summary", str(d["judge_summary"])))
    approval = d["spec_approval"]
    figures.append(
        (
            "spec freeze",
            "specApproval held (Goal and Boundary frozen since PLAN)"
            if approval
            else "no specApproval recorded"
            + (f"; {d['spec_approval_history']} retired record(s)" if d["spec_approval_history"] else ""),
        )
    )
    if d["graph_pause"]:
        figures.append(("graph", f"paused at {d['graph_pause']} (a resume continues at its successor)"))
    if d["harvest_preview"]:
        figures.append(("harvest would write", "; ".join(d["harvest_preview"])))
    warnings = [str(p) for p in loop.parse_failures]
    refused: dict[str, str] = {}
    reason_required: set[str] = set()
    if gap is None:
        warnings.append("no gap is recorded in iterate.feedback or iterate.lastVerdict")
        refused["ship"] = "no gap is recorded to ship with (iterate.feedback and lastVerdict.gap are empty)"
    if d["converged"]:
        warnings.append("the last verdict converged: nothing is left to rewind for")
    files = [display_path(fj, root)]
    if gate.id == ESCALATE_GATE:
        workflow = gate.prompt.format(
            fix=fix if gap else "see the last verdict",
            why="the gap needs an operator"
            if (gap or {}).get("needs_operator") is True
            else "the same fix_first survived a remediation round",
        )
        if loop.route != "escalate":
            warnings.append(f"the loop's route is {loop.route!r}, not 'escalate'")
        if gap is None:
            refused["resume"] = "no gap is recorded: there is no phase to re-enter"
        advice = "the run ends DONE status=escalated: the operator acts on the fix, then resumes or ships"
        default = "stop"
    else:
        workflow = gate.prompt.format(gap=desc)
        if gap is not None and gap.get("type") != "spec":
            warnings.append(f"the recorded gap is of type {gap.get('type')!r}, not 'spec'")
        if d["last_route"] not in (None, "spec"):
            warnings.append(f"the last recorded route is {d['last_route']!r}, not 'spec'")
        if gap is None or gap.get("type") != "spec" or d["converged"] or loop.route != "spec":
            # A destructive rewind the loop's own state does not call for needs its reason.
            reason_required.add("reopen")
        if d["exec_style"] in UNATTENDED_STYLES or d["autonomous"]:
            warnings.append(
                "upstream proceeds without asking in auto / review-only / autonomous runs (an unattended "
                "rewind keeps the spec freeze)"
            )
        figures.append(("reopen undoes", "; ".join(_reopen_undoes(data))))
        advice = "loop-spec's default (non-interactive) answer is reopen: DISCUSS refines toward the original goal"
        default = "reopen"
    return Evidence(
        gate=gate,
        target=fj.parent,
        state_file=fj,
        refused=refused,
        reason_required=reason_required,
        workflow_prompt=workflow,
        figures=figures,
        warnings=warnings,
        files_read=files,
        context={
            "root": root,
            "decisions_dir": fj.parent,
            "data": data,
            "meta": meta,
            "gap": gap,
            "gaps": _gaps(d),
            "gap_desc": desc,
            "gap_fix": fix,
            "loop_state": loop,
        },
        advice=advice,
        default=default,
    )


def backlog_path(root: Path) -> Path:
    env = settings.current().loop_spec_backlog_file
    if env:
        return Path(env)
    return root / ".loop-spec" / "BACKLOG.md"


# lib/backlog.sh's header of a new BACKLOG.md, byte for byte (printf '%s\\n' "$HEADER").
BACKLOG_HEADER = (
    "# BACKLOG.md\n\n"
    "Deferred work harvested by loop-spec: findings a tier deferred, goal gaps an\n"
    "iteration limit could not close, and manual entries. The cycle drains it with\n"
    "`/loop-spec:cycle backlog` (one feature per loop). You own the ordering -- the\n"
    "drain mode always takes the top unchecked entry.\n\n"
)


def backlog_add(plan: Plan, path: Path, slug: str, text: str, gid: str) -> str:
    """``backlog.sh add <slug> iterate-gap <text> --id <gid>``, planned: ``terminal`` when the id is
    closed TERMINAL, ``exists`` when an unchecked entry has the same text or id, else ``added``
    (the line's append is planned on the file as the plan leaves it)."""
    # A BACKLOG.md the user named (LOOP_SPEC_BACKLOG_FILE) is the user's own file, not the repository's.
    own = bool(settings.current().loop_spec_backlog_file)
    planned = plan.read(path, own=own)  # as the lines planned before it leave it (the write rule first)
    try:  # the one read policy (storage/safe_read): a regular UTF-8 file of at most 8 MiB
        safe_read.read_text(path, root=None if own else plan.root, what="BACKLOG.md")
    except FileNotFoundError:
        pass
    except safe_read.Unreadable as exc:
        raise UsageError(f"{path}: {exc}; nothing was recorded") from None
    existing = safe_read.decode(planned or b"")
    entries, _ = parse_backlog(existing, str(path.name))
    for e in entries:
        if e.id == gid and e.terminal:
            return "terminal"
    for e in entries:
        if not e.done and (e.id == gid or e.text == text):
            return "exists"
    what = f"({utc_date()} {slug} iterate-gap id={gid}) {text}"
    lead = BACKLOG_HEADER if not existing else ("" if existing.endswith("\n") else "\n")
    # Once: other features' records append to this file too, and backlog.sh rewrites it when it
    # closes an entry; only the line itself (its checkbox aside) says whether it is there.
    plan.append_once(path, f"{lead}- [ ] {what}\n".encode(), what.encode(), own=own)
    return "added"


def _line_lead(existing: bytes | None) -> bytes:
    """What an appended line needs first: a newline when the file does not end with one."""
    return b"\n" if existing and not existing.endswith(b"\n") else b""


def _progress(plan: Plan, fdir: Path, text: str) -> Path:
    path = fdir / "PROGRESS.md"
    plan.append(path, _line_lead(plan.read(path)) + f"- {utc_date()}: {' '.join(text.split())}\n".encode())
    return path


def _graph_answer(plan: Plan, fdir: Path, fj: Path, node: str, edge: str) -> list[Path]:
    """Consume the engine's pause record (as its resume does) and append one checkpoint record in
    the engine's own format (lib/graph/checkpoint.sh) naming ``node``: a resume continues at its
    successor, computed by the engine from the state as the answer left it."""
    written: list[Path] = []
    pause = fdir / GRAPH_PAUSE
    if pause.is_file() and plan.remove(pause):
        written.append(pause)
    record = {
        "node": node,
        "stateHash": posix_cksum(plan.read(fj) or b""),
        "gitSha": current_commit(fdir) or "unknown",
        "ts": utc_now_z(),
        "effort": "system1",
        "edge": edge,
    }
    ledger = fdir / GRAPH_LEDGER
    line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
    plan.append(ledger, _line_lead(plan.read(ledger)) + line)
    written.append(ledger)
    return written


def _ship(data: dict[str, Any], ctx: dict[str, Any], extra: list[str]) -> list[str]:
    """Ship as-is: deliver now; every open gap in warnings[] as harvest writes it (loop-spec's own
    scripts read a run with such a warning as not converged) and on the backlog."""
    it = data.setdefault("iterate", {})
    warns = as_list(data.get("warnings"))
    added = []
    for gap in ctx["gaps"]:
        warning = gap_warning(*gap_parts(gap))
        if warning not in warns:
            warns.append(warning)
            added.append(warning)
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
    extra.append(
        f"feature.json: currentPhase deliver, iterate.feedback null, {len(added)} gap(s) in warnings[] "
        "(iterate-budget-spent: — not converged) and on the backlog"
    )
    return added


def _reopen(data: dict[str, Any], extra: list[str], now: str) -> None:
    """Re-open SPEC/DISCUSS: rewind to DISCUSS refinement (seed 004), retiring the spec freeze."""
    it = data.setdefault("iterate", {})
    extra.append("reopen undoes: " + "; ".join(_reopen_undoes(data)))
    data["currentPhase"] = REOPEN_PHASE
    if "currentPhaseStartedAt" in data:
        data["currentPhaseStartedAt"] = None
    if isinstance(data.get("completedPhases"), list):
        data["completedPhases"] = [p for p in data["completedPhases"] if p not in _AFTER_REOPEN]
    if data.get("specApproval"):
        history = as_list(data.get("specApprovalHistory"))
        history.append(data["specApproval"])
        data["specApprovalHistory"] = history
        data["specApproval"] = None
    if "specIntentSeen" in data:
        data["specIntentSeen"] = False if isinstance(data["specIntentSeen"], bool) else None
    it["lastRoute"] = "spec"


def apply_loop_spec(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    now: str,
) -> GateResult:
    fj: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    fdir = fj.parent
    gate_id = evidence.gate.id
    with state_lock(fdir, user, root=evidence.context.get("root")):
        check_unchanged(fj, ctx["meta"]["fp"], ctx["meta"].get("root"))
        data = json.loads(json.dumps(ctx["data"]))  # a copy to modify
        recorded: list[Path] = []
        extra: list[str] = []
        added: list[str] = []
        changed = True
        if ans.value == "reopen":
            _reopen(data, extra, now)
            node = SPEC_GATE_NODE
        elif ans.value == "ship":
            added = _ship(data, ctx, extra)
            node = ITERATE_NODE
        elif ans.value == "resume":
            # The operator did what the escalated gap needed: ITERATE's verdict routes by the gap's
            # type again (lib/graph/probes/iterate-gap.sh reads iterate.feedback.type).
            it = data.setdefault("iterate", {})
            gap = dict(ctx["gap"] or {})
            if "needs_operator" in gap:
                gap["needs_operator"] = False
            it["feedback"] = gap
            it["lastRoute"] = str(gap.get("type") or "execute")
            extra.append(f"feature.json: iterate.feedback kept (needs_operator false), lastRoute {it['lastRoute']}")
            node = ITERATE_NODE
        else:  # stop - hand back: no state change; a resume routes ITERATE's verdict again
            changed = False
            node = ITERATE_NODE
            extra.append("no feature.json change: the cycle pauses and a resume asks again")
        if changed and "updatedAt" in data:
            data["updatedAt"] = utc_now_z()
        # One plan, committed at the end (storage.intent): a kill mid-record is completed by the
        # next taker of the lock.
        plan = Plan(fdir, root=evidence.context.get("root"))
        ad_path, number = record_entry(plan, evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        recorded.append(ad_path)
        if changed:
            recorded.extend(plan_feature_json(plan, fj, data, ctx["meta"]))
        label = {
            "reopen": "re-open SPEC/DISCUSS",
            "ship": "ship as-is",
            "stop": "stop - hand back",
            "resume": "resume after the operator's fix",
        }[ans.value]
        where = SPEC_GATE_NODE if gate_id != ESCALATE_GATE else ESCALATE_GATE
        recorded.extend(_graph_answer(plan, fdir, fj, node, f"{where}:{ans.value} (scars gate, decision-{number:03d})"))
        if ans.value == "ship":
            bl = backlog_path(ctx["root"])
            slug = str(data.get("slug") or fdir.name)
            for gap in ctx["gaps"]:
                desc, fix = gap_parts(gap)
                if backlog_add(plan, bl, slug, backlog_text(desc, fix), gap_id(fix)) == "added" and bl not in recorded:
                    recorded.append(bl)
        gate_name = "ITERATE escalate" if gate_id == ESCALATE_GATE else "ITERATE spec gate"
        recorded.append(_progress(plan, fdir, f"{gate_name}: {label} (decision-{number:03d}, {user} via scars gate)"))
        plan.commit()
    extras: dict[str, Any] = {"warnings_added": added} if added else {}
    return gate_result(evidence, ans, reason, user, recorded, number, **extras)
