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
WHERE = "loop-spec's .loop-spec/features/<slug> (or its feature.json), a 7.x run's state.json"


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
    # loop-spec 7.x asks through question.json (its options are the question's own: the gate takes
    # them from the file, ``loops.loopspec.questions.question_gate``); the two below are its blocked
    # question's (``questions.BLOCKED_OPTIONS``: stop first, the default, so a headless answerer ends
    # the run).
    Gate(
        id="question",
        entry_id="question",
        loop="loop-spec",
        title="loop-spec 7.x asks a question",
        stage="iteration",
        prompt_type="question",
        answers=(
            answer_of(
                "stop", "s", "Stop", "reject", False, "loop-spec records 'stop'; the run ends at its next launcher call"
            ),
            answer_of(
                "fix-and-re-enter",
                "f",
                "Fix and re-enter",
                "revise",
                False,
                "loop-spec records 'fix-and-re-enter'; the next launcher call re-enters the phase",
            ),
        ),
        principle="7.x ends an entry at a question and resumes when `loop-spec answer` recorded one; a policy "
        "answers only a question with a default",
        source="loop-spec 7.x skills/loop-spec/program/loop_spec/questions.py (ask / answer), cli.py `answer`",
        prompt="{question}",
    ),
)
