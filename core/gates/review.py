"""The ARIS / Mechanist `review-continue` gate: evidence from REVIEW_STATE.json, the answer recorded into it."""

from __future__ import annotations

import json
import re
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
from scars.core.loops.base import fmt_number
from scars.core.loops.review import (
    ARIS_MAX_ROUNDS,
    BLOCKING_BUCKETS,
    MECHANIST_MAX_CLAIM_REENTRIES,
    MECHANIST_MAX_ITERATIONS,
    POSITIVE,
    STALL_LIMIT,
    TARGET_SCORE,
    parse_verify_buckets,
    score_met,
)
from scars.core.loops.review import canonical_verdict as _canonical_verdict
from scars.core.samsara.session import FeatureSession

# The loops' constants and the STOP rule's score and verdict dimensions are the review reader's
# (scars.core.loops.review): one rule, one place, so `scars loops` and this gate agree.
MECHANIST_STALL = STALL_LIMIT


def canonical_verdict(raw: Any) -> str:
    """ready | almost | not ready (the loop readers' Phase B canonicalization; none = not ready)."""
    return _canonical_verdict(raw) or "not ready"


def _num(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    m = re.search(r"-?\d+(?:\.\d+)?", str(value or ""))
    return float(m.group()) if m else None


def locate_review_state(path: Path) -> Path:
    p = Path(path)
    if p.is_file():
        if not p.name.endswith(".json"):
            raise UsageError(f"{p} is not a REVIEW_STATE.json")
        return p
    if not p.exists():
        raise PathNotFound(f"{p} does not exist")
    for cand in (p / "review-stage" / "REVIEW_STATE.json", p / "REVIEW_STATE.json"):
        if cand.is_file():
            return cand
    raise PathNotFound(f"no REVIEW_STATE.json at {p} (looked in review-stage/ and the directory itself)")


def verify_buckets(report: Path) -> dict[str, int] | None:
    """Claims per bucket in verify/VERIFY_REPORT.md (None when it cannot be read)."""
    try:
        text = report.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return parse_verify_buckets(text)


def _last_heading_number(review_md: Path) -> int | None:
    try:
        text = review_md.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    nums = [int(m.group(2)) for m in re.finditer(r"^## (Iteration|Round) (\d+)", text, re.M)]
    return max(nums) if nums else None


def gather_review(gate: Gate, path: Path, **_: Any) -> Evidence:
    sf = locate_review_state(path)
    state, meta = load_json_state(sf)
    stage_dir = sf.parent
    root = stage_dir.parent if stage_dir.name == "review-stage" else stage_dir
    files = [display_path(sf, root)]
    mechanist = "iterations_consumed" in state
    score = _num(state.get("last_score"))
    raw_verdict = state.get("last_verdict")
    verdict = canonical_verdict(raw_verdict)
    warnings: list[str] = []
    score_ok = score_met(score)
    verdict_ok = verdict in POSITIVE
    review_md = stage_dir / "AUTO_REVIEW.md"
    heading = _last_heading_number(review_md)
    if heading is not None:
        files.append(display_path(review_md, root))
    refused: dict[str, str] = {}
    uncertainty = ("low", "")
    if mechanist:
        consumed = int(_num(state.get("iterations_consumed")) or 0)
        reentries = int(_num(state.get("claim_reentries_consumed")) or 0)
        max_it = int(_num(state.get("max_iterations")) or MECHANIST_MAX_ITERATIONS)
        noop = int(_num(state.get("consecutive_noop_count")) or 0)
        report = root / "verify" / "VERIFY_REPORT.md"
        buckets = verify_buckets(report)
        if buckets is None:
            buckets_ok = None
            bucket_text = "unknown (verify/VERIFY_REPORT.md not found)"
            warnings.append("claim buckets unknown: verify/VERIFY_REPORT.md not found — unknown is never success")
            uncertainty = ("high", "the claim buckets could not be read")
        else:
            files.append(display_path(report, root))
            blocking = sum(buckets[b] for b in BLOCKING_BUCKETS)
            buckets_ok = blocking == 0
            bucket_text = (
                f"FAIL {buckets['FAIL']}, INCONCLUSIVE {buckets['INCONCLUSIVE']}, "
                f"ZERO_ELIGIBLE_VARIANTS {buckets['ZERO_ELIGIBLE_VARIANTS']}, "
                f"PASS {buckets['PASS']}, INTEGRITY_ONLY {buckets['INTEGRITY_ONLY']}"
            )
            uncertainty = ("medium", "claim buckets counted from the verdict tokens of VERIFY_REPORT.md rows")
        stop_met = bool(score_ok and verdict_ok and buckets_ok)
        left_it = max(max_it - consumed, 0)
        left_re = max(MECHANIST_MAX_CLAIM_REENTRIES - reentries, 0)
        budget = f"iterations {left_it} of {max_it}, claim re-entries {left_re} of {MECHANIST_MAX_CLAIM_REENTRIES}"
        number = heading if heading is not None else max(consumed, 1)
        unit = "Iteration"
        figures = [
            ("lineage", "Mechanist auto-iteration-loop"),
            ("status", str(state.get("status"))),
            (
                "score",
                f"{'?' if score is None else f'{score:g}'}/10 (target >= {fmt_number(TARGET_SCORE)}): {'met' if score_ok else 'not met'}",
            ),
            ("verdict", f"{raw_verdict!s} → {verdict}: {'positive' if verdict_ok else 'not positive'}"),
            (
                "claim buckets",
                f"{bucket_text}: {'clear' if buckets_ok else ('unknown' if buckets_ok is None else 'blocking')}",
            ),
            ("STOP rule", "met" if stop_met else "not met"),
            ("iterations consumed", f"{consumed} of {max_it} ({left_it} left)"),
            ("claim re-entries", f"{reentries} of {MECHANIST_MAX_CLAIM_REENTRIES} ({left_re} left)"),
            ("no-op streak", f"{noop} of {MECHANIST_STALL}"),
        ]
        if state.get("runs_total") is not None or state.get("gpu_hours_total") is not None:
            figures.append(("runs / GPU hours", f"{state.get('runs_total')} / {state.get('gpu_hours_total')}"))
        if left_it == 0:
            refused["continue"] = f"the iteration budget is spent ({consumed} of {max_it}); budgets are never reset"
        if noop >= MECHANIST_STALL:
            warnings.append(f"stall guard: {noop} consecutive no-op iterations (limit {MECHANIST_STALL})")
        if state.get("status") == "awaiting_upstream":
            warnings.append("status awaiting_upstream: the pending upstream calls run before the loop resumes")
    else:
        rnd = int(_num(state.get("round", state.get("current_round"))) or 0)
        max_rounds = int(_num(state.get("max_rounds")) or ARIS_MAX_ROUNDS)
        stop_met = bool(score_ok and verdict_ok)
        left = max(max_rounds - rnd, 0)
        budget = f"rounds {left} of {max_rounds}"
        number = heading if heading is not None else rnd
        unit = "Round"
        figures = [
            ("lineage", "ARIS auto-review-loop"),
            ("status", str(state.get("status"))),
            (
                "score",
                f"{'?' if score is None else f'{score:g}'}/10 (target >= {fmt_number(TARGET_SCORE)}): {'met' if score_ok else 'not met'}",
            ),
            ("verdict", f"{raw_verdict!s} → {verdict}: {'positive' if verdict_ok else 'not positive'}"),
            ("claim buckets", "n/a (auto-review-loop has no claim buckets)"),
            ("STOP rule", "met" if stop_met else "not met"),
            ("rounds", f"{rnd} of {max_rounds} ({left} left)"),
        ]
        if isinstance(state.get("score_trajectory"), list):
            figures.append(
                (
                    "score trend",
                    " → ".join(f"{_num(s):g}" if _num(s) is not None else "?" for s in state["score_trajectory"]),
                )
            )
        if state.get("pending_experiments"):
            warnings.append(f"{len(state['pending_experiments'])} pending experiment(s) in REVIEW_STATE.json")
        if left == 0:
            refused["continue"] = f"the round budget is spent ({rnd} of {max_rounds})"
    if state.get("status") == "completed":
        refused.setdefault("continue", "REVIEW_STATE.json says status completed; the loop returns at once on resume")
    if score is None:
        warnings.append("last_score is missing or not a number")
    overrides = {"stop": "proceed"} if stop_met else {}
    reason_required = {"continue"} if stop_met else set()
    if stop_met:
        advice = "STOP rule met: the loop would stop here"
    elif "continue" in refused:
        advice = f"STOP rule not met and {refused['continue']}: the loop closes out"
    else:
        advice = f"STOP rule not met: the loop would continue ({budget} left)"
    prompt = gate.prompt.format(
        unit=unit,
        unit_lower=unit.lower(),
        number=number,
        next=number + 1,
        score="?" if score is None else f"{score:g}",
        verdict=verdict,
        stop="met" if stop_met else "not met",
        budget=budget,
    )
    return Evidence(
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
            "exhausted": "continue" in refused and state.get("status") != "completed",
        },
        reason_required=reason_required,
        decision_overrides=overrides,
        refused=refused,
        advice=advice,
        default="stop" if stop_met else "continue",
        uncertainty=uncertainty,
    )


def apply_review(
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
    with state_lock(sf.parent, user):
        check_unchanged(sf, ctx["meta"]["fp"])
        recorded: list[Path] = []
        extra: list[str] = []
        data = json.loads(json.dumps(ctx["data"]))
        if ans.value == "stop":
            # Only what the gate decides: the loop is completed, and why.
            data["status"] = "completed"
            if ctx["mechanist"]:
                if ctx["stop_met"]:
                    data["termination_reason"] = "positive_verdict"
                elif ctx["exhausted"]:
                    data["termination_reason"] = "iterations_exhausted"
                else:
                    data["termination_reason"] = "human_stop"
            extra.append(
                f"REVIEW_STATE.json: status completed"
                f"{', termination_reason ' + data['termination_reason'] if 'termination_reason' in data and ctx['mechanist'] else ''}"
            )
        ad_path, number = record_entry(evidence, ans, reason, user=user, now=now, extra_consequences=extra)
        recorded.append(ad_path)
        if ans.value == "stop":
            write_json_state(sf, data, ctx["meta"])
            recorded.append(sf)
    return gate_result(evidence, ans, reason, user, recorded, number)
