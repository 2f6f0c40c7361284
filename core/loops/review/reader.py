"""Review loops: Mechanist auto-iteration-loop and ARIS auto-review-loop (formats.md §3).

Both lineages keep ``review-stage/REVIEW_STATE.json``, ``AUTO_REVIEW.md`` and
``REVIEWER_MEMORY.md`` (legacy: at the project root). The lineage is told by shape: a state
with ``iterations_consumed`` is Mechanist, anything else ARIS. Real ARIS files drift
(``thread_id``/``threadId``, ``current_round``/``round``, free-form verdicts): documented
keys are normalised, everything else is kept in ``raw``.

The lineages' own readers are ``mechanist`` and ``aris``; what they share is in ``shared``,
``verdicts``, ``auto_review`` (the log and the memory) and ``verify`` (Mechanist's claim buckets).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

from scars.core.loops.base import (
    LoopState,
    now_utc,
    read_json,
    read_text,
    rel,
)
from scars.core.loops.review.aris import read_aris
from scars.core.loops.review.auto_review import parse_auto_review, parse_reviewer_memory
from scars.core.loops.review.mechanist import read_mechanist
from scars.core.model import Problem


def _lineage(state: dict[str, Any] | None) -> str:
    if isinstance(state, dict) and ("iterations_consumed" in state or "claim_reentries_consumed" in state):
        return "mechanist"
    return "aris"


def read_review_dir(directory: Path, root: Path | None = None, *, now: datetime | None = None) -> LoopState:
    """One review loop: the state, log and memory files of ``directory``. Never raises on bad input."""
    directory = Path(directory)
    root = Path(root) if root is not None else directory
    now = now or now_utc()
    failures: list[Problem] = []
    state_path = directory / "REVIEW_STATE.json"
    review_path = directory / "AUTO_REVIEW.md"
    memory_path = directory / "REVIEWER_MEMORY.md"

    state: dict[str, Any] | None = None
    if state_path.exists() or state_path.is_symlink():
        data, failure = read_json(state_path, root)
        if failure is not None:
            failures.append(failure)
        elif not isinstance(data, dict):
            failures.append(Problem(rel(state_path, root), None, "REVIEW_STATE.json is not a JSON object"))
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
                    Problem(rel(review_path, root), None, "no `## Iteration N` / `## Round N` section found")
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
        return read_mechanist(directory, root, state, runs, memory, failures, now)
    return read_aris(directory, root, state, runs, memory, failures, now)
