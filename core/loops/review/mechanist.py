"""Mechanist's auto-iteration-loop (seed 003): its REVIEW_STATE.json (iterations and claim
re-entries consumed, the stall guard), the claim buckets and each open claim's legal back-edge
actions, read into a LoopState."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.loops.base import (
    Budget,
    LoopState,
    StopRule,
    TrendPoint,
    as_int,
    as_number,
    configured_count,
    parse_time,
    read_text,
    rel,
)
from scars.core.loops.review.auto_review import last_from_runs, points_from_runs, runs_summary
from scars.core.loops.review.shared import STALE_AFTER, TARGET_SCORE, loop_name, project_of, stop_rule
from scars.core.loops.review.verdicts import canonical_status, canonical_verdict
from scars.core.loops.review.verify import VERIFY_REPORT, VerifyClaims, read_verify_claims
from scars.core.model import Problem
from scars.core.text import join_clauses
from scars.core.values import as_list

# Mechanist constants (seed 003).
MECHANIST_MAX_ITERATIONS = 6
MECHANIST_MAX_CLAIM_REENTRIES = 2
STALL_LIMIT = 2
# The termination reasons Mechanist writes (auto-iteration-loop SKILL.md, Termination step 2), and
# `stalled`: the stall guard's termination ("status 'stalled'" in its final report), which real
# runs write as their termination_reason too.
MECHANIST_TERMINATIONS = ("positive_verdict", "iterations_exhausted", "claim_reentry_exhausted", "stalled")


# Action types of seed 003 (formats.md §3.3): ① variant-only fix, ② main-experiment-script / plan
# fix, ③ claim-stage re-entry. `iteration_breakdown[].type` names them; the ② name is not given
# upstream (`main_experiment_fix` is ours), so the usual spellings of each are accepted.
ACTION_TYPES: dict[str, tuple[str, ...]] = {
    "①": ("variant_fix", "variant_only_fix", "①", "1", "type_1"),
    "②": ("main_experiment_fix", "experiment_fix", "main_experiment_script_fix", "plan_fix", "②", "2", "type_2"),
    "③": ("claim_reentry", "claim_stage_reentry", "claim_rewrite", "③", "3", "type_3"),
}
MAX_TYPE_2_PER_CLAIM = 2  # "If it has already had 2 ② attempts and is still INCONCLUSIVE, do not attempt a 3rd"


def _action_type(value: Any) -> str | None:
    key = str(value).strip().lower().replace("-", "_").replace(" ", "_") if value is not None else ""
    return next((t for t, names in ACTION_TYPES.items() if key in names), None)


def claim_actions(
    claims: dict[str, str], breakdown: list[dict[str, Any]], budget: Budget, reentries: Budget
) -> dict[str, dict[str, Any]]:
    """The legal back-edge actions of each open claim (seed 003's per-bucket routing contract).

    FAIL: ① (variant fix), then ③ (claim-stage re-entry) once a ① has run on it — ③ refused when
    the re-entry sub-budget is spent; INCONCLUSIVE: ② only, at most twice per claim (③ is never
    legal: the main experiment is broken, not the claim); ZERO_ELIGIBLE_VARIANTS: ① only;
    INTEGRITY_ONLY: no action. Every action costs an iteration: none is legal once the budget is
    spent. ``needs`` is the action the claim waits for next.
    """
    done: dict[str, dict[str, int]] = {}
    for entry in breakdown:
        kind = _action_type(entry.get("type"))
        if kind is None:
            continue
        for claim in as_list(entry.get("target_claims")):
            done.setdefault(str(claim), {}).setdefault(kind, 0)
            done[str(claim)][kind] += 1
    out: dict[str, dict[str, Any]] = {}
    for claim, state in claims.items():
        if state == "PASS":
            continue
        history = done.get(claim, {})
        legal: list[str] = []
        refused: dict[str, str] = {}
        needs: str | None = None
        if state == "FAIL":
            needs = "③" if history.get("①") else "①"
            legal.append("①")
            if reentries.spent:
                refused["③"] = f"claim re-entry sub-budget spent ({reentries.used}/{reentries.limit})"
            else:
                legal.append("③")
            refused["②"] = "a FAIL claim's main experiment passed its audit: ② is for INCONCLUSIVE claims"
            if needs == "③" and "③" in refused:
                legal.remove("①")  # its variants were already fixed: only a re-entry would help
        elif state == "INCONCLUSIVE":
            needs = "②"
            refused["③"] = "claim rewrite is forbidden on an INCONCLUSIVE claim (fix the main experiment)"
            refused["①"] = "the variants never ran: the main experiment is what is broken"
            attempts = history.get("②", 0)
            if attempts >= MAX_TYPE_2_PER_CLAIM:
                refused["②"] = (
                    f"already {attempts} type ② attempts (at most {MAX_TYPE_2_PER_CLAIM} per claim): "
                    "requires manual main-experiment repair"
                )
            else:
                legal.append("②")
        elif state == "ZERO_ELIGIBLE_VARIANTS":
            needs = "①"
            legal.append("①")
            refused["②"] = "the main experiment passed its audit: fix the variant scripts only"
            refused["③"] = "the claim is not at fault: fix the variant scripts only"
        elif state == "INTEGRITY_ONLY":
            for kind in ACTION_TYPES:
                refused[kind] = "INTEGRITY_ONLY is a no-action bucket (recorded under Open Items)"
        if budget.spent:
            for kind in legal:
                refused.setdefault(kind, f"the iteration budget is spent ({budget.used}/{budget.limit})")
            legal = []
        out[claim] = {"bucket": state, "legal": legal, "refused": refused, "needs": needs, "done": history}
    return out


def read_mechanist(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[Problem], now: datetime
) -> LoopState:
    state = state or {}
    state_file = rel(directory / "REVIEW_STATE.json", root)
    used = as_int(state.get("iterations_consumed"))
    reentries = as_int(state.get("claim_reentries_consumed"))
    # The log's last "Budget after this iteration" line: the counts when the state has none, and
    # the limits the run was configured with (MAX_ITERATIONS / MAX_CLAIM_REENTRIES are overridable).
    log_budget = (
        next((sec for sec in reversed(runs[-1]["sections"]) if sec.get("iterations") is not None), None)
        if runs
        else None
    )
    if used is None and log_budget is not None:
        used, reentries = log_budget["iterations"], log_budget.get("claim_reentries")
    noop = as_int(state.get("consecutive_noop_count")) or 0
    status = canonical_status(state.get("status"))
    if status not in (None, "in_progress", "awaiting_upstream", "completed", "stalled"):
        failures.append(Problem(state_file, None, f"unknown status {status!r} (kept)"))
    termination = state.get("termination_reason") if isinstance(state.get("termination_reason"), str) else None
    score = as_number(state.get("last_score"))
    verdict_text = state.get("last_verdict") if isinstance(state.get("last_verdict"), str) else None
    if score is None and verdict_text is None:
        score, verdict_text, _ = last_from_runs(runs)
    verdict = canonical_verdict(verdict_text)

    # Buckets from verify/VERIFY_REPORT.md next to the review stage (project root).
    project = project_of(directory)
    buckets: dict[str, int] | None = None
    unresolved: tuple[tuple[int, str], ...] = ()
    claims: VerifyClaims | None = None
    verify_path = project / VERIFY_REPORT
    if verify_path.exists() or verify_path.is_symlink():
        text, failure = read_text(verify_path, root)
        if failure is not None:
            failures.append(failure)
            source = f"claim buckets unknown: {VERIFY_REPORT} unreadable"
        else:
            claims = read_verify_claims(text or "")
            source = VERIFY_REPORT
            if claims.claims or claims.declared is not None:
                buckets = claims.counts
            unresolved = claims.unresolved
            if not claims.claims and claims.declared is None:
                source = f"claim buckets unknown: no claim state found in {VERIFY_REPORT}"
            verify_file = rel(verify_path, root)
            for number, why in unresolved:
                failures.append(Problem(verify_file, number or None, f"claim state unknown: {why}"))
    elif status == "completed" and termination == "positive_verdict":
        buckets = {}
        source = f"the loop terminated on a positive verdict ({VERIFY_REPORT} not found)"
    else:
        source = f"claim buckets unknown: {VERIFY_REPORT} not found"
    stop = stop_rule(score, verdict, buckets, source, unresolved, verdict_text)

    # MAX_ITERATIONS is overridable upstream (the `MAX_ITERATIONS:` argument); a state that
    # records `max_iterations` is read with it.
    logged = log_budget or {}
    limit = configured_count(
        state.get("max_iterations"), configured_count(logged.get("iterations_limit"), MECHANIST_MAX_ITERATIONS)
    )
    reentry_limit = configured_count(
        state.get("max_claim_reentries"),
        configured_count(logged.get("claim_reentries_limit"), MECHANIST_MAX_CLAIM_REENTRIES),
    )
    budget = Budget(used, limit, "iterations")
    reentry_budget = Budget(reentries, reentry_limit, "claim re-entries")
    stalled = noop >= STALL_LIMIT or status == "stalled"
    stamp = parse_time(state.get("timestamp"))
    stale = bool(stamp and status != "awaiting_upstream" and now - stamp > STALE_AFTER)
    reasons = list(stop.reasons)
    if stalled:
        reasons.append(f"stall guard: {noop} consecutive no-op iterations (limit {STALL_LIMIT})")
    if reentry_budget.spent:
        reasons.append(f"claim re-entry sub-budget spent ({reentries}/{reentry_limit}): type ③ refused")
    if budget.spent:
        reasons.append(f"iteration budget spent ({used}/{limit})")
    breakdown = [e for e in as_list(state.get("iteration_breakdown")) if isinstance(e, dict)]
    actions = claim_actions(claims.claims if claims else {}, breakdown, budget, reentry_budget)
    # The loop's own terminations besides STOP: the budget, the re-entry sub-budget when only
    # type ③ could help the open claims, the stall guard.
    reentry_exhausted = (
        stop.met is not True
        and not budget.spent
        and reentry_budget.spent
        and bool(actions)
        and all(not a["legal"] for a in actions.values())
        and any("③" in a["refused"] and a["needs"] == "③" for a in actions.values())
    )
    if reentry_exhausted:
        reasons.append("only type ③ could help the open claims and the claim re-entry sub-budget is spent")
    outcome = stop.outcome or (
        "stalled"
        if stalled
        else termination
        or ("iterations_exhausted" if budget.spent else ("claim_reentry_exhausted" if reentry_exhausted else None))
    )
    stop = StopRule(stop.met, tuple(reasons), outcome)

    pending = as_list(state.get("pending_upstream_calls"))
    if status == "completed":
        route = "done"
    elif status == "awaiting_upstream":
        skills = [c.get("skill") for c in pending if isinstance(c, dict) and c.get("skill")]
        route = "upstream: " + (" → ".join(map(str, skills)) if skills else "pending calls")
    elif stalled or budget.spent or reentry_exhausted:
        route = "terminate"
    else:
        route = f"iteration {(used or 0) + 1}"

    waiting = False
    if status == "completed":
        # Terminated (by the loop, or by a person at the gate): nothing is waiting any more.
        reason = f"completed ({termination or 'no termination_reason recorded'})"
    elif stop.met is not True and (budget.spent or stalled or reentry_exhausted):
        waiting = True
        why = (
            "the stall guard fired"
            if stalled
            else f"the iteration budget is spent ({used}/{limit})"
            if budget.spent
            else f"the claim re-entry sub-budget is spent ({reentries}/{reentry_limit}) and only type ③ could help"
        )
        reason = f"STOP rule not met and {why}: a person decides what happens to the open claims"
    elif stop.met:
        reason = "STOP rule met: " + join_clauses(stop.reasons[:2])
    elif status == "awaiting_upstream":
        reason = f"awaiting upstream calls ({len(pending)}) run by the orchestrator"
    else:
        reason = "STOP rule not met; " + budget.describe()
    if stale:
        reason += f"; state is stale (last written {state.get('timestamp')}): a resume archives it and starts fresh"

    points = points_from_runs(runs)
    if not points and score is not None:
        points = [TrendPoint(f"iteration {used or 1}", score, verdict)]
    details = {
        "lineage": "mechanist",
        "status": status,
        "termination_reason": termination,
        "last_score": score,
        "last_verdict": verdict_text,
        "canonical_verdict": verdict,
        "target_score": TARGET_SCORE,
        "claim_reentries": reentry_budget.to_dict(),
        "consecutive_noop_count": noop,
        "stalled": stalled,
        "stale": stale,
        "timestamp": state.get("timestamp"),
        "display_iteration": (used or 0) + 1,
        "thread_id": state.get("thread_id", state.get("threadId")),
        "buckets": buckets,
        "buckets_source": source,
        "claims_unresolved": [why for _, why in unresolved],
        "claims": dict(claims.claims) if claims else {},
        "claim_actions": actions,
        "pending_upstream_calls": pending,
        "runs_total": state.get("runs_total"),
        "gpu_hours_total": state.get("gpu_hours_total"),
        "auto_review_runs": runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="mechanist",
        name=loop_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=stop,
        route=route,
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=state,
        status=status or "unknown",
        trend_label="review score /10",
        points=tuple(points),
        details=details,
    )
