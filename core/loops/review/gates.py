"""The ARIS / Mechanist `review-continue` gate: evidence from REVIEW_STATE.json, the answer recorded into it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scars.core.errors import PathNotFound, UsageError
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
from scars.core.loops.base import Budget, fmt_number
from scars.core.loops.review.mechanist import MECHANIST_TERMINATIONS, STALL_LIMIT
from scars.core.loops.review.reader import read_review_dir
from scars.core.loops.review.shared import STAGE_DIR, TARGET_SCORE, project_of, score_met
from scars.core.loops.review.verdicts import POSITIVE, verdict_parts
from scars.core.loops.review.verify import BLOCKING_BUCKETS, VERIFY_REPORT
from scars.core.records import record
from scars.core.storage.intent import Plan


def locate_review_state(path: Path) -> Path:
    p = Path(path)
    if p.is_file():
        if not p.name.endswith(".json"):
            raise UsageError(f"{p} is not a REVIEW_STATE.json")
        return p
    if not p.exists():
        raise PathNotFound.missing(p)
    for cand in (p / STAGE_DIR / "REVIEW_STATE.json", p / "REVIEW_STATE.json"):
        if cand.is_file():
            return cand
    raise PathNotFound(f"no REVIEW_STATE.json at {p} (looked in review-stage/ and the directory itself)")


def _of(budget: Budget) -> str:
    """``used of limit (left left)`` of a reader's budget (``?`` where it is unknown)."""
    used = "?" if budget.used is None else str(budget.used)
    limit = "?" if budget.limit is None else str(budget.limit)
    left = "?" if budget.left is None else str(budget.left)
    return f"{used} of {limit} ({left} left)"


def _buckets_figure(buckets: dict[str, int] | None, source: str, unresolved: int = 0) -> str:
    if buckets is None:
        return f"unknown ({source})"
    counts = ", ".join(f"{b} {buckets.get(b, 0)}" for b in (*BLOCKING_BUCKETS, "PASS", "INTEGRITY_ONLY"))
    blocking = any(buckets.get(b, 0) for b in BLOCKING_BUCKETS)
    verdict = (
        "blocking" if blocking else (f"unknown ({unresolved} claim state(s) unreadable)" if unresolved else "clear")
    )
    return f"{counts}: {verdict}" + ("" if source == VERIFY_REPORT else f" ({source})")


@record(frozen=False)
class ReviewEvidence(Evidence):
    """The review gate's evidence, naming the loop it is about: one gate serves both lineages,
    and a Mechanist loop's evidence says ``mechanist`` (``loop`` of :meth:`as_json`)."""

    loop: str = "aris"

    def loop_name(self) -> str:
        return self.loop


def gather_review(gate: Gate, path: Path, **_: Any) -> Evidence:
    """The evidence of the review gate: every budget, limit and rule is the review reader's
    (scars.core.loops.review.reader), so `scars loops` and this gate never disagree."""
    sf = locate_review_state(path)
    stage_dir = sf.parent
    root = project_of(stage_dir)
    state, meta = load_json_state(sf, root)
    loop = read_review_dir(stage_dir, root)
    d = loop.details
    mechanist = loop.kind == "mechanist"
    score = d["last_score"]
    raw_verdict = d["last_verdict"]
    compound = verdict_parts(raw_verdict) if d["canonical_verdict"] is None else []
    verdict = d["canonical_verdict"] or ("unknown (a compound verdict)" if compound else "not ready")
    score_ok = score_met(score)
    verdict_ok = verdict in POSITIVE
    stop_met = loop.stop_rule.met is True
    stop_text = {True: "met", False: "not met", None: "not met (cannot be evaluated: unknown is never success)"}[
        loop.stop_rule.met
    ]
    files = [display_path(sf, root)]
    runs = d["auto_review_runs"]
    heading = runs[-1]["sections"][-1]["number"] if runs else None
    if runs:
        files.append(display_path(stage_dir / "AUTO_REVIEW.md", root))
    warnings = [str(p) for p in loop.parse_failures]
    refused: dict[str, str] = {}
    reason_required: set[str] = set()
    ends: list[str] = []  # what makes the loop itself end here although continue may be given (a reason)
    uncertainty = ("low", "")
    score_text = f"{'?' if score is None else f'{score:g}'}/10 (target >= {fmt_number(TARGET_SCORE)})"
    figures = [
        ("lineage", "Mechanist auto-iteration-loop" if mechanist else "ARIS auto-review-loop"),
        ("status", str(d["status"])),
        ("score", f"{score_text}: {'met' if score_ok else 'not met'}"),
        ("verdict", f"{raw_verdict!s} → {verdict}: {'positive' if verdict_ok else 'not positive'}"),
    ]
    budget = loop.budget
    if mechanist:
        buckets, source = d["buckets"], d["buckets_source"]
        unresolved = d["claims_unresolved"]
        if buckets is None:
            warnings.append(f"{source} — unknown is never success")
            uncertainty = ("high", "the claim buckets could not be read")
        elif unresolved:
            # Each unreadable claim state is already a parse failure of the reader (with its line).
            files.append(display_path(root / VERIFY_REPORT, root))
            uncertainty = ("high", "a claim state in VERIFY_REPORT.md could not be read: unknown is never success")
        elif source == VERIFY_REPORT:
            files.append(display_path(root / VERIFY_REPORT, root))
            uncertainty = (
                "medium",
                "claim states read from VERIFY_REPORT.md (the State column, its markers or the only state token)",
            )
        reentries = Budget(**{k: d["claim_reentries"][k] for k in ("used", "limit", "unit")})
        left = "?" if budget.left is None else budget.left
        budget_text = f"iterations {left} of {budget.limit}, claim re-entries {reentries.left} of {reentries.limit}"
        number = heading if heading is not None else max(budget.used or 0, 1)
        unit = "Iteration"
        figures += [
            ("claim buckets", _buckets_figure(buckets, source, len(unresolved))),
            ("STOP rule", stop_text),
            ("iterations consumed", _of(budget)),
            ("claim re-entries", _of(reentries)),
            ("no-op streak", f"{d['consecutive_noop_count']} of {STALL_LIMIT}"),
        ]
        if d["runs_total"] is not None or d["gpu_hours_total"] is not None:
            figures.append(("runs / GPU hours", f"{d['runs_total']} / {d['gpu_hours_total']}"))
        if budget.spent:
            refused["continue"] = (
                f"the iteration budget is spent ({budget.used} of {budget.limit}); budgets are never reset"
            )
        for claim, act in d["claim_actions"].items():
            if act["bucket"] == "INTEGRITY_ONLY":
                continue
            legal = ", ".join(act["legal"]) or "none"
            refused_text = "; ".join(f"{k} refused: {v}" for k, v in act["refused"].items() if k == act["needs"])
            figures.append(
                (f"claim {claim}", f"{act['bucket']}: legal {legal}" + (f" ({refused_text})" if refused_text else ""))
            )
        if d["stalled"]:
            warnings.append(
                f"stall guard: {d['consecutive_noop_count']} consecutive no-op iterations (limit {STALL_LIMIT}): "
                "the loop terminates as stalled"
            )
            reason_required.add("continue")
            ends.append("the stall guard fired (the loop terminates as stalled)")
        if loop.stop_rule.outcome == "claim_reentry_exhausted":
            warnings.append("only type ③ could help the open claims and the claim re-entry sub-budget is spent")
            reason_required.add("continue")
            ends.append("the claim re-entry sub-budget is spent")
        if d["status"] == "awaiting_upstream":
            warnings.append("status awaiting_upstream: the pending upstream calls run before the loop resumes")
    else:
        left = "?" if budget.left is None else budget.left
        budget_text = f"rounds {left} of {budget.limit}"
        number = heading if heading is not None else (budget.used or 0)
        unit = "Round"
        figures += [
            ("claim buckets", "n/a (auto-review-loop has no claim buckets)"),
            ("STOP rule", stop_text),
            ("rounds", _of(budget)),
        ]
        if len(loop.trend) > 1:
            figures.append(("score trend", " → ".join(fmt_number(v) for v in loop.trend)))
        if d["pending_experiments"]:
            warnings.append(f"{len(d['pending_experiments'])} pending experiment(s) in REVIEW_STATE.json")
        if budget.spent:
            refused["continue"] = f"the round budget is spent ({budget.used} of {budget.limit})"
    if d["status"] == "completed":
        refused.setdefault("continue", "REVIEW_STATE.json says status completed; the loop returns at once on resume")
    if score is None:
        warnings.append("last_score is missing or not a number")
    if d["stale"] and d["status"] != "completed":
        warnings.append(
            f"REVIEW_STATE.json is older than 24 h (timestamp {d['timestamp']}): the loop's resume archives it "
            "and starts fresh instead of continuing"
        )
        reason_required.add("continue")
    overrides = {"stop": "proceed"} if stop_met else {}
    if stop_met:
        reason_required.add("continue")
    if stop_met:
        advice = "STOP rule met: the loop would stop here"
    elif "continue" in refused:
        advice = f"STOP rule not met and {refused['continue']}: the loop closes out"
    elif ends:
        advice = f"STOP rule not met, but {ends[0]}: the loop would stop here (continuing needs a reason)"
    else:
        advice = f"STOP rule not met: the loop would continue ({budget_text} left)"
    prompt = gate.prompt.format(
        unit=unit,
        unit_lower=unit.lower(),
        number=number,
        next=number + 1,
        score="?" if score is None else f"{score:g}",
        verdict=verdict,
        stop="met" if stop_met else "not met",
        budget=budget_text,
    )
    if "continue" in refused:
        # No next iteration is offered where continue cannot be given.
        prompt = prompt.replace(
            f"(A) continue to {unit.lower()} {number + 1}", f"(A) continue (refused: {refused['continue']})"
        )
    return ReviewEvidence(
        loop=loop.kind,
        gate=gate,
        target=stage_dir,
        state_file=sf,
        workflow_prompt=prompt,
        figures=figures,
        warnings=warnings,
        files_read=files,
        context={
            "root": root,
            "decisions_dir": stage_dir,
            "data": state,
            "meta": meta,
            "mechanist": mechanist,
            "stop_met": stop_met,
            "exhausted": "continue" in refused and d["status"] != "completed",
            "termination": loop.stop_rule.outcome,
            "loop_state": loop,
        },
        reason_required=reason_required,
        decision_overrides=overrides,
        refused=refused,
        advice=advice,
        default="stop" if stop_met or "continue" in refused or ends else "continue",
        uncertainty=uncertainty,
    )


def apply_review(
    evidence: Evidence,
    ans: Answer,
    reason: str | None,
    *,
    user: str,
    source: str,
    now: str,
) -> GateResult:
    sf: Path = evidence.state_file  # type: ignore[assignment]  # this gate's gather always sets it
    ctx = evidence.context
    with state_lock(sf.parent, user, root=evidence.context.get("root")):
        check_unchanged(sf, ctx["meta"]["fp"], ctx["meta"].get("root"))
        recorded: list[Path] = []
        extra: list[str] = []
        data = json.loads(json.dumps(ctx["data"]))
        if ans.value == "stop":
            # Only what the gate decides: the loop is completed, and why — in the loop's own words
            # (Mechanist's termination_reason ∈ positive_verdict | iterations_exhausted |
            # claim_reentry_exhausted | stalled). A person's stop that is none of those writes no reason: the
            # auto-decisions.md entry next to the state holds it.
            data["status"] = "completed"
            # Mechanist writes `timestamp` at every state write and its resume checks it first (older
            # than 24 h: the state is archived and the loop starts fresh), so a stop keeping the old
            # one would be thrown away as stale. ARIS's resume deletes a state older than 24 h: its
            # timestamp is renewed too where the state keeps one (a state without one stays so).
            if ctx["mechanist"] or "timestamp" in data:
                data["timestamp"] = now
            reason_value = None
            if ctx["mechanist"]:
                if ctx["stop_met"]:
                    reason_value = "positive_verdict"
                elif ctx["termination"] in MECHANIST_TERMINATIONS:
                    reason_value = ctx["termination"]
                if reason_value is not None:
                    data["termination_reason"] = reason_value
            extra.append(
                "REVIEW_STATE.json: status completed" + (f", termination_reason {reason_value}" if reason_value else "")
            )
        plan = Plan(sf.parent, root=evidence.context.get("root"))
        ad_path, number = record_entry(plan, evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        recorded.append(ad_path)
        if ans.value == "stop":
            recorded.append(plan_json_state(plan, sf, data, ctx["meta"]))
        plan.commit()
    return gate_result(evidence, ans, reason, user, recorded, number)
