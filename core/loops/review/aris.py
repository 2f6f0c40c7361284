"""ARIS's auto-review-loop: its REVIEW_STATE.json as real runs write it (``round`` /
``current_round``, ``rounds[]``, trajectories, free-form verdicts), read into a LoopState."""

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
    fmt_number,
    parse_time,
    rel,
)
from scars.core.loops.review.auto_review import last_from_runs, points_from_runs, runs_summary
from scars.core.loops.review.shared import STALE_AFTER, TARGET_SCORE, loop_name, stop_rule
from scars.core.loops.review.verdicts import canonical_status, canonical_verdict
from scars.core.model import Problem
from scars.core.values import as_list

# ARIS auto-review-loop constant.
ARIS_MAX_ROUNDS = 4


def read_aris(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[Problem], now: datetime
) -> LoopState:
    state_file = rel(directory / "REVIEW_STATE.json", root)
    st = state or {}
    round_key = "round" if "round" in st else ("current_round" if "current_round" in st else None)
    rounds = as_list(st.get("rounds"))
    used = as_int(st.get(round_key)) if round_key else None
    if round_key and used is None:
        failures.append(Problem(state_file, None, f"{round_key} {st.get(round_key)!r} is not a round number"))
    if used is None and rounds:
        used = max((as_int(r.get("round")) or 0) for r in rounds if isinstance(r, dict)) or None
    if used is None and runs:
        numbered = [s["number"] for s in runs[-1]["sections"] if s["score"] is not None or s["verdict"] is not None]
        used = max(numbered) if numbered else None
    limit = configured_count(st.get("max_rounds"), ARIS_MAX_ROUNDS)
    status = canonical_status(st.get("status"))

    # Last score and verdict: the documented keys, else the last round entry, else the log.
    score = as_number(st.get("last_score"))
    verdict_text = st.get("last_verdict") if isinstance(st.get("last_verdict"), str) else None
    source = "REVIEW_STATE.json"
    if (score is None or verdict_text is None) and rounds:
        last_round = next((r for r in reversed(rounds) if isinstance(r, dict)), {})
        if score is None:
            score = as_number(last_round.get("score"))
        if verdict_text is None and isinstance(last_round.get("verdict"), str):
            verdict_text = last_round["verdict"]
        source = "REVIEW_STATE.json rounds[]"
    if score is None and verdict_text is None and runs:
        score, verdict_text, _ = last_from_runs(runs)
        source = "AUTO_REVIEW.md"
    verdict = canonical_verdict(verdict_text)
    stop = stop_rule(score, verdict, None, "", verdict_text=verdict_text)

    # Trend: AUTO_REVIEW.md's current run, else rounds[], else score_trajectory.
    points = points_from_runs(runs)
    if not points and rounds:
        for index, r in enumerate(rounds, 1):
            if isinstance(r, dict):
                points.append(
                    TrendPoint(
                        f"round {as_int(r.get('round')) or index}",
                        as_number(r.get("score")),
                        canonical_verdict(r.get("verdict")),
                    )
                )
    if not points and isinstance(st.get("score_trajectory"), list):
        verdicts = as_list(st.get("verdict_trajectory"))
        for index, value in enumerate(st["score_trajectory"], 1):
            v = verdicts[index - 1] if index - 1 < len(verdicts) else None
            points.append(TrendPoint(f"round {index}", as_number(value), canonical_verdict(v)))
    if not points and score is not None:
        points = [TrendPoint(f"round {used or 1}", score, verdict)]

    budget = Budget(used, limit, "rounds")
    stamp = parse_time(st.get("timestamp"))
    stale = bool(stamp and now - stamp > STALE_AFTER)
    if status == "completed":
        route = "done"
    elif budget.spent:
        route = "terminate"
    else:
        route = f"round {(used or 0) + 1}"
    waiting = False
    if status == "completed":
        reason = f"completed: score {fmt_number(score)}, verdict {verdict or 'unknown'}"
    elif stop.met is not True and budget.spent:
        waiting = True
        reason = f"STOP rule not met and the round budget is spent ({used}/{limit}): a person decides"
    elif stop.met:
        reason = f"positive: score {fmt_number(score)}, verdict {verdict}"
    elif stop.met is None:
        reason = "STOP rule cannot be evaluated: " + stop.reasons[-1]
    elif state is None and not runs:
        reason = "no review state or log could be read"
    else:
        reason = "STOP rule not met; " + budget.describe()
    if stale and status != "completed":
        reason += f"; state older than 24 h ({st.get('timestamp')}): a resume restarts the loop"
    details = {
        "lineage": "aris",
        "status": status,
        "round_key": round_key,
        "last_score": score,
        "last_verdict": verdict_text,
        "canonical_verdict": verdict,
        "target_score": TARGET_SCORE,
        "score_source": source,
        "thread_id": st.get("threadId", st.get("thread_id")),
        "difficulty": st.get("difficulty"),
        # The run's own threshold, when its state records one (kept as written, not evaluated).
        "own_threshold": st.get("positive_threshold_effective"),
        "own_threshold_met": st.get("positive_threshold_met"),
        "pending_experiments": as_list(st.get("pending_experiments")),
        "timestamp": st.get("timestamp"),
        "stale": stale,
        "auto_review_runs": runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="aris",
        name=loop_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=StopRule(
            stop.met,
            stop.reasons + ((f"{used}/{limit} rounds",) if used is not None else ()),
            stop.outcome or ("rounds_exhausted" if budget.spent else None),
        ),
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
