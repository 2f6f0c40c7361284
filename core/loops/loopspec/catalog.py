"""loop-spec's gates as data: ITERATE's SPEC-level gap (``spec``) and its escalation (``escalate``)."""

from __future__ import annotations

from scars.core.gatekit.catalog import Answer, Gate, answer_of

LOOP_SPEC_PROMPT = (
    "ITERATE judges the goal still unmet because of a SPEC-level gap: {gap}. Re-open SPEC/DISCUSS, ship as-is, or stop?"
)

# Ship as-is and Stop - hand back: the two answers loop-spec's `spec` and `escalate` gates share.
LOOP_SPEC_SHIP_OR_STOP = (
    Answer(
        "ship",
        "s",
        "Ship as-is",
        "accept_gap",
        True,
        "complete now; the open gaps are recorded in warnings[] and the backlog",
        ("ship-as-is", "2"),
    ),
    Answer(
        "stop",
        "h",
        "Stop - hand back",
        "reject",
        False,
        "pause the cycle and return control; a resume asks again",
        ("hand-back", "3"),
    ),
)

LOOP_SPEC_ESCALATE_PROMPT = (
    "ITERATE escalated: {why}. Fix first: {fix}. The run ends DONE status=escalated — "
    "resume after the operator's fix, ship as-is, or stop?"
)


# What PATH names for its gates (`scars gate --help`).
WHERE = "loop-spec's .loop-spec/features/<slug> (or its feature.json)"


# Every decision point of the loop (its gates, and any it decides itself): the registry gathers
# them into GATES and DECISION_POINTS (scars.core.loops.registry).
POINTS: tuple[Gate, ...] = (
    Gate(
        id="spec",
        entry_id="spec",
        loop="loop-spec",
        title="SPEC-level gap: re-open, ship as-is, or stop",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "reopen",
                "r",
                "Re-open SPEC/DISCUSS",
                "revise",
                False,
                "rewind to DISCUSS refinement toward the original goal (costs an iteration); the spec "
                "freeze is retired into specApprovalHistory",
                "re-open",
                "1",
            ),
            *LOOP_SPEC_SHIP_OR_STOP,
        ),
        principle="a SPEC-level gap is the expensive rewind; step/interactive runs ask the operator",
        source="loop-spec skills/iterate/SKILL.md step 3 (spec route)",
        prompt=LOOP_SPEC_PROMPT,
    ),
    Gate(
        id="escalate",
        entry_id="escalate",
        loop="loop-spec",
        title="ITERATE escalated: the gap needs an operator",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "resume",
                "r",
                "Resume after the operator's fix",
                "revise",
                True,
                "the operator did what the gap needed; ITERATE's verdict routes by the gap's type again",
                "resolved",
                "1",
            ),
            *LOOP_SPEC_SHIP_OR_STOP,
        ),
        principle="escalate: the gap needs an operator (needs_operator, or the same fix_first survived a "
        "remediation round); never rewind again for it",
        source="loop-spec skills/iterate/SKILL.md step 3 (escalate route)",
        prompt=LOOP_SPEC_ESCALATE_PROMPT,
    ),
)
