"""Review loops: Mechanist auto-iteration-loop and ARIS auto-review-loop (formats.md §3).

Both lineages keep ``review-stage/REVIEW_STATE.json``, ``AUTO_REVIEW.md`` and
``REVIEWER_MEMORY.md`` (legacy: at the project root). The lineage is told by shape: a state
with ``iterations_consumed`` is Mechanist, anything else ARIS. Real ARIS files drift
(``thread_id``/``threadId``, ``current_round``/``round``, free-form verdicts): documented
keys are normalised, everything else is kept in ``raw``.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
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
    make_points_trend,
    now_utc,
    parse_time,
    read_json,
    read_text,
    rel,
    score_out_of_ten,
)
from scars.core.model import ParseFailure
from scars.core.values import as_list

# Mechanist constants (seed 003).
MECHANIST_MAX_ITERATIONS = 6
MECHANIST_MAX_CLAIM_REENTRIES = 2
TARGET_SCORE = 6.0
STALL_LIMIT = 2
STALE_AFTER = timedelta(hours=24)
# ARIS auto-review-loop constant.
ARIS_MAX_ROUNDS = 4

POSITIVE = ("ready", "almost")
VERIFY_REPORT = "verify/VERIFY_REPORT.md"  # the claim buckets, next to the review stage
BLOCKING_BUCKETS = ("FAIL", "INCONCLUSIVE", "ZERO_ELIGIBLE_VARIANTS")
BUCKETS = ("PASS",) + BLOCKING_BUCKETS + ("INTEGRITY_ONLY",)

# Verdict canonicalisation tables (Phase B), checked before any substring rule.
_READY_TERMS = {
    "ready",
    "accept",
    "accepted",
    "sufficient",
    "good enough",
    "looks ready",
    "ready for submission",
    "yes",
}
_ALMOST_TERMS = {"almost", "almost ready", "nearly ready", "close", "minor revision", "minor revisions"}
_NOT_READY_TERMS = {
    "not ready",
    "revise",
    "weak",
    "reject",
    "rejected",
    "needs major work",
    "major revision",
    "major revisions",
    "no",
    "not yet",
}
_NOT_READY_PATTERN = re.compile(r"\bnot\s+(?:yet\s+|quite\s+)?ready\b|\bnot\s+almost\b")


def canonical_verdict(text: Any) -> str | None:
    """A reviewer's free-form verdict as ``ready`` / ``almost`` / ``not ready``.

    Lowercase, trim, strip markdown and punctuation, look the phrase up in the synonym
    tables, then test substrings — ``not ready`` *before* ``ready`` (it contains it).
    Anything else is ``not ready``; None when there is no verdict at all.
    """
    if text is None:
        return None
    if not isinstance(text, str):
        text = str(text)
    t = text.lower()
    t = re.sub(r"[*_`#>\[\]()\"'“”]", " ", t)
    t = re.sub(r"[.,;:!?]+", " ", t)
    t = " ".join(t.split())
    if not t:
        return None
    if t in _NOT_READY_TERMS:
        return "not ready"
    if t in _ALMOST_TERMS:
        return "almost"
    if t in _READY_TERMS:
        return "ready"
    if _NOT_READY_PATTERN.search(t):
        return "not ready"
    if re.search(r"\balmost\b", t) or any(t.startswith(term + " ") for term in _ALMOST_TERMS):
        return "almost"
    if re.search(r"\bready\b", t) or any(t.startswith(term + " ") for term in _READY_TERMS - {"yes"}):
        return "ready"
    return "not ready"


# --------------------------------------------------------------------------- AUTO_REVIEW.md

_REVIEW_SECTION = re.compile(r"^##\s+(?P<kind>Iteration|Round)\s+(?P<n>\d+)\b(?P<rest>.*)$", re.IGNORECASE)
# "- Budget after this iteration: iterations 3/6, claim-reentries 1/2"
_BUDGET_LINE = re.compile(r"budget after this iteration\W+iterations\s+(\d+)\s*/\s*\d+", re.IGNORECASE)
_REENTRY_LINE = re.compile(r"claim[- ]re-?entries\s+(\d+)\s*/\s*\d+", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_LABEL = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?\s*(?P<label>score|verdict)\s*(?:\*\*|__)?\s*:\s*(?:\*\*|__)?(?P<value>.*)$",
    re.IGNORECASE,
)


def _unfenced_lines(text: str):
    """(line number, line, inside a fenced block?) for every line."""
    fenced = False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            yield number, line, True
            continue
        yield number, line, fenced


def _verdict_value(value: str) -> str:
    value = value.strip().strip("*_` ").strip()
    # Cut commentary after the verdict words: "Almost (minor fixes)", "`ready` — …".
    value = re.split(r"\s+[—–-]\s+|\s*\(", value, maxsplit=1)[0]
    return value.strip("*_` ").strip()


def parse_auto_review(text: str) -> list[dict[str, Any]]:
    """Round/iteration sections of AUTO_REVIEW.md, grouped into runs.

    Headings are matched leniently (``## Iteration N`` / ``## Round N`` with any suffix),
    never inside fenced code; a level-1 heading or a section number that does not grow
    starts a new run. The score is the first number before ``/10`` on the section's
    ``Score`` line; the verdict is canonicalised.
    """
    runs: list[dict[str, Any]] = []
    title = None
    current: dict[str, Any] | None = None

    def new_run(run_title: str | None) -> dict[str, Any]:
        run: dict[str, Any] = {"title": run_title, "sections": []}
        runs.append(run)
        return run

    run: dict[str, Any] | None = None
    for number, line, fenced in _unfenced_lines(text):
        if fenced:
            continue
        if line.startswith("# "):
            title = line[2:].strip()
            if run is None or run["sections"]:
                run = new_run(title)
            else:
                run["title"] = title
            current = None
            continue
        m = _REVIEW_SECTION.match(line)
        if m:
            n = int(m.group("n"))
            if run is None:
                run = new_run(title)
            elif run["sections"] and n <= run["sections"][-1]["number"]:
                run = new_run(None)
            current = {
                "kind": m.group("kind").lower(),
                "number": n,
                "heading": line[3:].strip(),
                "line": number,
                "score": None,
                "verdict_text": None,
                "verdict": None,
                "final": "FINAL" in m.group("rest"),
                "iterations": None,
                "claim_reentries": None,
            }
            run["sections"].append(current)
            continue
        if line.startswith("## "):
            current = None
            continue
        if current is None:
            continue
        budget = _BUDGET_LINE.search(line)
        if budget and current["iterations"] is None:
            current["iterations"] = int(budget.group(1))
            reentry = _REENTRY_LINE.search(line)
            current["claim_reentries"] = int(reentry.group(1)) if reentry else None
            continue
        lm = _LABEL.match(line)
        if not lm:
            continue
        if lm.group("label").lower() == "score" and current["score"] is None:
            current["score"] = score_out_of_ten(lm.group("value")) or as_number(lm.group("value").replace("*", ""))
        elif lm.group("label").lower() == "verdict" and current["verdict_text"] is None:
            raw_value = _verdict_value(lm.group("value"))
            if raw_value:
                current["verdict_text"] = raw_value
                current["verdict"] = canonical_verdict(raw_value)
    return [r for r in runs if r["sections"]]


# --------------------------------------------------------------------------- REVIEWER_MEMORY.md

_MEMORY_HEADING = re.compile(r"^##\s+(?P<heading>.*?\b(?:Iteration|Round)\s+(?P<n>\d+)\b.*)$", re.IGNORECASE)


def parse_reviewer_memory(text: str) -> list[dict[str, Any]]:
    """``## [Night N ]Iteration|Round N — Score: X/10, Verdict: V`` sections of REVIEWER_MEMORY.md."""
    sections = []
    for number, line, fenced in _unfenced_lines(text):
        if fenced:
            continue
        m = _MEMORY_HEADING.match(line)
        if not m:
            continue
        heading = m.group("heading").strip()
        verdict_m = re.search(r"Verdict:\s*(.+)$", heading, re.IGNORECASE)
        verdict_text = _verdict_value(verdict_m.group(1)) if verdict_m else None
        sections.append(
            {
                "heading": heading,
                "number": int(m.group("n")),
                "line": number,
                "score": score_out_of_ten(heading),
                "verdict_text": verdict_text,
                "verdict": canonical_verdict(verdict_text) if verdict_text else None,
            }
        )
    return sections


# --------------------------------------------------------------------------- verify buckets

_BUCKET_TOKEN = re.compile(r"\b(PASS|FAIL|INCONCLUSIVE|ZERO_ELIGIBLE_VARIANTS|INTEGRITY_ONLY)\b")


def parse_verify_buckets(text: str) -> dict[str, int]:
    """Claims per bucket in ``verify/VERIFY_REPORT.md``: one verdict token per table row or list item."""
    counts = {b: 0 for b in BUCKETS}
    for _, line, fenced in _unfenced_lines(text):
        if fenced:
            continue
        stripped = line.strip()
        if not stripped.startswith(("|", "-", "*")) or set(stripped) <= set("|-: "):
            continue
        tokens = _BUCKET_TOKEN.findall(stripped)
        if len(set(tokens)) == 1:
            counts[tokens[0]] += 1
    return counts


# --------------------------------------------------------------------------- reading a loop


STAGE_DIR = "review-stage"


def project_of(directory: Path) -> Path:
    """The project of a review loop's directory: the parent of ``review-stage/``, else the
    directory itself (the legacy layout keeps the files at the project root)."""
    return directory.parent if directory.name == STAGE_DIR else directory


def _lineage(state: dict[str, Any] | None) -> str:
    if isinstance(state, dict) and ("iterations_consumed" in state or "claim_reentries_consumed" in state):
        return "mechanist"
    return "aris"


def read_review_dir(directory: Path, root: Path | None = None, *, now: datetime | None = None) -> LoopState:
    """One review loop: the state, log and memory files of ``directory``. Never raises on bad input."""
    directory = Path(directory)
    root = Path(root) if root is not None else directory
    now = now or now_utc()
    failures: list[ParseFailure] = []
    state_path = directory / "REVIEW_STATE.json"
    review_path = directory / "AUTO_REVIEW.md"
    memory_path = directory / "REVIEWER_MEMORY.md"

    state: dict[str, Any] | None = None
    if state_path.exists() or state_path.is_symlink():
        data, failure = read_json(state_path, root)
        if failure is not None:
            failures.append(failure)
        elif not isinstance(data, dict):
            failures.append(ParseFailure(rel(state_path, root), None, "REVIEW_STATE.json is not a JSON object"))
        else:
            state = data

    runs: list[dict[str, Any]] = []
    if review_path.exists() or review_path.is_symlink():
        text, failure = read_text(review_path, root)
        if failure is not None:
            failures.append(failure)
        else:
            runs = parse_auto_review(text or "")
            if not runs:
                failures.append(
                    ParseFailure(rel(review_path, root), None, "no `## Iteration N` / `## Round N` section found")
                )
    memory: list[dict[str, Any]] = []
    if memory_path.exists() or memory_path.is_symlink():
        text, failure = read_text(memory_path, root)
        if failure is not None:
            failures.append(failure)
        else:
            memory = parse_reviewer_memory(text or "")

    lineage = _lineage(state)
    if lineage == "mechanist" or (state is None and runs and runs[-1]["sections"][-1]["kind"] == "iteration"):
        return _mechanist(directory, root, state, runs, memory, failures, now)
    return _aris(directory, root, state, runs, memory, failures, now)


def _name(directory: Path, root: Path) -> str:
    """The loop's name: its path from the scanned root, with the project's name when that is short."""
    r = rel(directory, root)
    if r in ("", ".") or "/" not in r:
        parent = directory.absolute().parent.name
        return f"{parent}/{directory.name}" if parent else directory.name
    return r


def _points_from_runs(runs: list[dict[str, Any]]) -> list[TrendPoint]:
    if not runs:
        return []
    points = []
    for section in runs[-1]["sections"]:
        if section["score"] is None and section["verdict"] is None:
            continue  # a bootstrap section (e.g. "Round 0: Bootstrap")
        points.append(TrendPoint(f"{section['kind']} {section['number']}", section["score"], section["verdict"]))
    return points


def _last_from_runs(runs: list[dict[str, Any]]) -> tuple[float | None, str | None, str | None]:
    for run in reversed(runs):
        for section in reversed(run["sections"]):
            if section["score"] is not None or section["verdict"] is not None:
                return section["score"], section["verdict_text"], section["verdict"]
    return None, None, None


def score_met(score: float | None) -> bool:
    """The STOP rule's score dimension: a score at or above 6/10 (no score never meets it).

    The one place of this rule: the loop readers and the ``review-continue`` gate call it.
    """
    return score is not None and score >= TARGET_SCORE


def _stop(score: float | None, verdict: str | None, buckets: dict[str, int] | None, buckets_source: str) -> StopRule:
    reasons = []
    met_score = score_met(score)
    reasons.append(
        f"score {fmt_number(score)} {'≥' if met_score else '<'} {fmt_number(TARGET_SCORE)}"
        if score is not None
        else "no score yet"
    )
    met_verdict = verdict in POSITIVE
    reasons.append(f"verdict {verdict or 'unknown'} {'is' if met_verdict else 'is not'} ready/almost")
    met: bool | None = met_score and met_verdict
    if buckets is not None:
        blocking = {b: buckets.get(b, 0) for b in BLOCKING_BUCKETS if buckets.get(b, 0)}
        if blocking:
            met = False
            reasons.append("claims still in " + ", ".join(f"{b} ({n})" for b, n in blocking.items()))
        else:
            reasons.append(f"no FAIL/INCONCLUSIVE/ZERO_ELIGIBLE claims ({buckets_source})")
    elif buckets_source:
        if met:
            met = None  # two dimensions hold, the third cannot be checked: unknown is not success
        reasons.append(buckets_source)
    return StopRule(met, tuple(reasons), "positive_verdict" if met else None)


def _mechanist(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[ParseFailure], now: datetime
) -> LoopState:
    state = state or {}
    state_file = rel(directory / "REVIEW_STATE.json", root)
    used = as_int(state.get("iterations_consumed"))
    reentries = as_int(state.get("claim_reentries_consumed"))
    if used is None and runs:  # no state: the log's last "Budget after this iteration" line
        for section in reversed(runs[-1]["sections"]):
            if section.get("iterations") is not None:
                used, reentries = section["iterations"], section.get("claim_reentries")
                break
    noop = as_int(state.get("consecutive_noop_count")) or 0
    status = state.get("status") if isinstance(state.get("status"), str) else None
    if status not in (None, "in_progress", "awaiting_upstream", "completed", "stalled"):
        failures.append(ParseFailure(state_file, None, f"unknown status {status!r} (kept)"))
    termination = state.get("termination_reason") if isinstance(state.get("termination_reason"), str) else None
    score = as_number(state.get("last_score"))
    verdict_text = state.get("last_verdict") if isinstance(state.get("last_verdict"), str) else None
    if score is None and verdict_text is None:
        score, verdict_text, _ = _last_from_runs(runs)
    verdict = canonical_verdict(verdict_text)

    # Buckets from verify/VERIFY_REPORT.md next to the review stage (project root).
    project = project_of(directory)
    buckets = None
    verify_path = project / VERIFY_REPORT
    if verify_path.exists() or verify_path.is_symlink():
        text, failure = read_text(verify_path, root)
        if failure is not None:
            failures.append(failure)
            source = f"claim buckets unknown: {VERIFY_REPORT} unreadable"
        else:
            buckets = parse_verify_buckets(text or "")
            source = VERIFY_REPORT
    elif status == "completed" and termination == "positive_verdict":
        buckets = {}
        source = f"the loop terminated on a positive verdict ({VERIFY_REPORT} not found)"
    else:
        source = f"claim buckets unknown: {VERIFY_REPORT} not found"
    stop = _stop(score, verdict, buckets, source)

    # MAX_ITERATIONS is overridable upstream (the `MAX_ITERATIONS:` argument); a state that
    # records `max_iterations` is read with it.
    limit = configured_count(state.get("max_iterations"), MECHANIST_MAX_ITERATIONS)
    budget = Budget(used, limit, "iterations")
    reentry_budget = Budget(reentries, MECHANIST_MAX_CLAIM_REENTRIES, "claim re-entries")
    stalled = noop >= STALL_LIMIT or status == "stalled"
    stamp = parse_time(state.get("timestamp"))
    stale = bool(stamp and status != "awaiting_upstream" and now - stamp > STALE_AFTER)
    reasons = list(stop.reasons)
    if stalled:
        reasons.append(f"stall guard: {noop} consecutive no-op iterations (limit {STALL_LIMIT})")
    if reentry_budget.spent:
        reasons.append(f"claim re-entry sub-budget spent ({reentries}/{MECHANIST_MAX_CLAIM_REENTRIES}): type ③ refused")
    if budget.spent:
        reasons.append(f"iteration budget spent ({used}/{limit})")
    outcome = stop.outcome or (
        "stalled" if stalled else termination or ("iterations_exhausted" if budget.spent else None)
    )
    stop = StopRule(stop.met, tuple(reasons), outcome)

    pending = as_list(state.get("pending_upstream_calls"))
    if status == "completed":
        route = "done"
    elif status == "awaiting_upstream":
        skills = [c.get("skill") for c in pending if isinstance(c, dict) and c.get("skill")]
        route = "upstream: " + (" → ".join(map(str, skills)) if skills else "pending calls")
    elif stalled or budget.spent:
        route = "terminate"
    else:
        route = f"iteration {(used or 0) + 1}"

    waiting = False
    if stop.met is not True and (budget.spent or stalled):
        waiting = True
        why = "the stall guard fired" if stalled else f"the iteration budget is spent ({used}/{limit})"
        reason = f"STOP rule not met and {why}: a person decides what happens to the open claims"
    elif stop.met:
        reason = "STOP rule met: " + "; ".join(stop.reasons[:2])
    elif status == "awaiting_upstream":
        reason = f"awaiting upstream calls ({len(pending)}) run by the orchestrator"
    else:
        reason = "STOP rule not met; " + budget.describe()
    if stale:
        reason += f"; state is stale (last written {state.get('timestamp')}): a resume archives it and starts fresh"

    points = _points_from_runs(runs)
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
        "pending_upstream_calls": pending,
        "runs_total": state.get("runs_total"),
        "gpu_hours_total": state.get("gpu_hours_total"),
        "auto_review_runs": _runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="mechanist",
        name=_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=stop,
        route=route,
        trend=make_points_trend(points),
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=state,
        status=status or "unknown",
        trend_label="review score /10",
        points=tuple(points),
        details=details,
    )


def _runs_summary(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "title": run["title"],
            "sections": [
                {
                    k: s.get(k)
                    for k in (
                        "kind",
                        "number",
                        "heading",
                        "line",
                        "score",
                        "verdict_text",
                        "verdict",
                        "final",
                        "iterations",
                        "claim_reentries",
                    )
                }
                for s in run["sections"]
            ],
        }
        for run in runs
    ]


def _aris(
    directory: Path, root: Path, state: dict[str, Any] | None, runs, memory, failures: list[ParseFailure], now: datetime
) -> LoopState:
    state_file = rel(directory / "REVIEW_STATE.json", root)
    st = state or {}
    round_key = "round" if "round" in st else ("current_round" if "current_round" in st else None)
    rounds = as_list(st.get("rounds"))
    used = as_int(st.get(round_key)) if round_key else None
    if round_key and used is None:
        failures.append(ParseFailure(state_file, None, f"{round_key} {st.get(round_key)!r} is not a round number"))
    if used is None and rounds:
        used = max((as_int(r.get("round")) or 0) for r in rounds if isinstance(r, dict)) or None
    if used is None and runs:
        numbered = [s["number"] for s in runs[-1]["sections"] if s["score"] is not None or s["verdict"] is not None]
        used = max(numbered) if numbered else None
    limit = configured_count(st.get("max_rounds"), ARIS_MAX_ROUNDS)
    status = st.get("status") if isinstance(st.get("status"), str) else None

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
        score, verdict_text, _ = _last_from_runs(runs)
        source = "AUTO_REVIEW.md"
    verdict = canonical_verdict(verdict_text)
    stop = _stop(score, verdict, None, "")

    # Trend: AUTO_REVIEW.md's current run, else rounds[], else score_trajectory.
    points = _points_from_runs(runs)
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
    if stop.met is not True and budget.spent:
        waiting = True
        reason = f"STOP rule not met and the round budget is spent ({used}/{limit}): a person decides"
    elif stop.met:
        reason = f"positive: score {fmt_number(score)}, verdict {verdict}"
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
        "auto_review_runs": _runs_summary(runs),
        "reviewer_memory": memory,
    }
    return LoopState(
        kind="aris",
        name=_name(directory, root),
        path=rel(directory, root),
        budget=budget,
        stop_rule=StopRule(
            stop.met,
            stop.reasons + ((f"{used}/{limit} rounds",) if used is not None else ()),
            stop.outcome or ("rounds_exhausted" if budget.spent else None),
        ),
        route=route,
        trend=make_points_trend(points),
        waiting_for_human=waiting,
        reason=reason,
        parse_failures=tuple(failures),
        raw=state,
        status=status or "unknown",
        trend_label="review score /10",
        points=tuple(points),
        details=details,
    )
