"""What the two review lineages share: the STOP rule (score ≥ 6, verdict ready/almost, no
blocking claim), the 24 h staleness of a state, the stage directory and the loop's name."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from scars.core.loops.base import (
    StopRule,
    fmt_number,
    rel,
)
from scars.core.loops.review.verdicts import POSITIVE, verdict_parts
from scars.core.loops.review.verify import BLOCKING_BUCKETS

TARGET_SCORE = 6.0
STALE_AFTER = timedelta(hours=24)

STAGE_DIR = "review-stage"


def project_of(directory: Path) -> Path:
    """The project of a review loop's directory: the parent of ``review-stage/``, else the
    directory itself (the legacy layout keeps the files at the project root)."""
    return directory.parent if directory.name == STAGE_DIR else directory


def loop_name(directory: Path, root: Path) -> str:
    """The loop's name: its path from the scanned root, with the project's name when that is short."""
    r = rel(directory, root)
    if r in ("", ".") or "/" not in r:
        parent = directory.absolute().parent.name
        return f"{parent}/{directory.name}" if parent else directory.name
    return r


def score_met(score: float | None) -> bool:
    """The STOP rule's score dimension: a score at or above 6/10 (no score never meets it).

    The one place of this rule: the loop readers and the ``review-continue`` gate call it.
    """
    return score is not None and score >= TARGET_SCORE


def stop_rule(
    score: float | None,
    verdict: str | None,
    buckets: dict[str, int] | None,
    buckets_source: str,
    unresolved: tuple[tuple[int, str], ...] = (),
    verdict_text: str | None = None,
) -> StopRule:
    """The STOP rule: score ≥ 6, verdict ready/almost, no blocking claim. ``buckets`` None = the
    claim states are unknown (``buckets_source`` says why); ``unresolved`` lines of the report
    whose claim state could not be read. A blocking claim always blocks; when two dimensions hold
    and the third is unknown the rule cannot be evaluated (unknown is never success)."""
    reasons = []
    met_score = score_met(score)
    reasons.append(
        f"score {fmt_number(score)} {'≥' if met_score else '<'} {fmt_number(TARGET_SCORE)}"
        if score is not None
        else "no score yet"
    )
    met_verdict = verdict in POSITIVE
    parts = verdict_parts(verdict_text) if verdict is None else []
    met: bool | None = met_score and met_verdict
    if parts:
        # "Ready (workshop…); Not ready (main-track…)": one verdict per target, and the target the
        # loop stopped for is not written. Unknown, never read as either.
        reasons.append(
            "compound verdict ("
            + "; ".join(f"{kind}: {part}" for kind, part in parts)
            + "): which target the STOP rule is about is not written, so it cannot be evaluated"
        )
        if met_score:
            met = None
    else:
        reasons.append(f"verdict {verdict or 'unknown'} {'is' if met_verdict else 'is not'} ready/almost")
    blocking = {b: buckets.get(b, 0) for b in BLOCKING_BUCKETS if buckets.get(b, 0)} if buckets else {}
    if blocking:
        met = False
        reasons.append("claims still in " + ", ".join(f"{b} ({n})" for b, n in blocking.items()))
    if unresolved:
        if met:
            met = None
        first = unresolved[0][1]
        more = f" (and {len(unresolved) - 1} more)" if len(unresolved) > 1 else ""
        reasons.append(f"claim states unknown in {buckets_source}: {first}{more}")
    elif buckets is not None:
        if not blocking:
            reasons.append(f"no FAIL/INCONCLUSIVE/ZERO_ELIGIBLE claims ({buckets_source})")
    elif buckets_source:
        if met:
            met = None  # two dimensions hold, the third cannot be checked: unknown is not success
        reasons.append(buckets_source)
    return StopRule(met, tuple(reasons), "positive_verdict" if met else None)
