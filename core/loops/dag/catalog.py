"""The DAG loop's gate as data: the iteration detector's and convergence monitor's ESCALATE."""

from __future__ import annotations

from scars.core.gatekit.catalog import Gate, answer_of

DAG_ESCALATE_PROMPT = "{task}: ESCALATE to a person — {why}. Take over, retry with guidance, accept as-is, or abort?"


# What PATH names for its gates (`scars gate --help`).
WHERE = "a DAG report .yaml"


# Every decision point of the loop (its gates, and any it decides itself): the registry gathers
# them into GATES and DECISION_POINTS (scars.core.loops.registry).
POINTS: tuple[Gate, ...] = (
    Gate(
        id="dag-escalate",
        entry_id="dag-escalate",
        loop="dag",
        title="A DAG iteration escalated to a person",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "take-over",
                "t",
                "Take over (human completion)",
                "accept_gap",
                False,
                "a person completes what is left (seed 000 Example 2: partial acceptance, human completion)",
                "human",
                "complete",
            ),
            answer_of(
                "retry",
                "r",
                "Retry with guidance",
                "revise",
                True,
                "iterate again with the person's fix direction as guidance (the reason is the guidance)",
                "refine",
                "guide",
            ),
            answer_of(
                "accept",
                "a",
                "Accept as-is",
                "accept_gap",
                True,
                "accept the output with its open triggers recorded",
                "accept-as-is",
            ),
            answer_of("abort", "x", "Abort", "reject", True, "stop the task: the output is not used", "stop"),
        ),
        principle="dag-iteration-detector: escalate on fixability < 0.3, no iteration left, under 25 % of the "
        "tokens, an insufficient budget, a plateau, or vague user rejection",
        source="dag-iteration-detector SKILL.md (seed 000): ESCALATE to human; dag-convergence-monitor: escalate",
        prompt=DAG_ESCALATE_PROMPT,
    ),
)
