"""The review loops' gate as data: ``review-continue`` (ARIS auto-review-loop and Mechanist)."""

from __future__ import annotations

from scars.core.gatekit.catalog import Gate, answer_of

REVIEW_PROMPT = (
    "{unit} {number} reviewed: score {score}/10, verdict {verdict}. STOP rule {stop}. "
    "Budget left: {budget}. (A) continue to {unit_lower} {next} (B) stop the loop"
)


# What PATH names for its gates (`scars gate --help`).
WHERE = "a review loop's review-stage/ (or its REVIEW_STATE.json)"


# Every decision point of the loop (its gates, and any it decides itself): the registry gathers
# them into GATES and DECISION_POINTS (scars.core.loops.registry).
POINTS: tuple[Gate, ...] = (
    Gate(
        id="review-continue",
        entry_id="review-continue",
        loop="aris",
        title="Review iteration done: continue or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "continue",
                "a",
                "(A) continue",
                "proceed",
                False,
                "run the next review iteration within the budgets left",
                "A",
                "c",
            ),
            answer_of(
                "stop",
                "b",
                "(B) stop",
                "accept_gap",
                True,
                "terminate the loop: REVIEW_STATE.json status completed and the termination reason",
                "B",
                "s",
            ),
        ),
        principle="STOP = score >= 6 AND verdict in {ready, almost} AND no FAIL / INCONCLUSIVE / ZERO_ELIGIBLE claim; unknown is never success",
        source="Mechanist auto-iteration-loop Phase B / ARIS auto-review-loop (formats.md §3.3, §3.6)",
        prompt=REVIEW_PROMPT,
    ),
)
